"""Reading raw JSON field by field: the client reads what the API server answered, never a parse of the
whole object, so a field it does not use (or a value a newer operator wrote) cannot hide the ones it does."""

from typing import TypeGuard

JsonObject = dict[str, object]


def is_object(value: object) -> TypeGuard[JsonObject]:
    return isinstance(value, dict)


def child(value: object, name: str) -> object:
    """`value[name]` when value is an object, else None. JSON null and absence are alike: not set."""
    return value.get(name) if is_object(value) else None
