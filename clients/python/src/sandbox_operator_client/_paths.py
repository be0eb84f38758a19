"""The API paths of the objects the client reads and writes."""

from urllib.parse import quote

from ._vocabulary import GROUP, SANDBOX_CLAIMS, SANDBOXES, SESSION_REFERENCES, VERSION


def _segment(value: str) -> str:
    return quote(value, safe="")


def _namespaced(namespace: str, plural: str) -> str:
    return f"/apis/{GROUP}/{VERSION}/namespaces/{_segment(namespace)}/{plural}"


def references_path(namespace: str) -> str:
    return _namespaced(namespace, SESSION_REFERENCES)


def reference_path(namespace: str, name: str) -> str:
    return f"{references_path(namespace)}/{_segment(name)}"


def sandbox_path(namespace: str, name: str) -> str:
    return f"{_namespaced(namespace, SANDBOXES)}/{_segment(name)}"


def reference_target(namespace: str, name: str) -> str:
    return f"sessionreference {namespace}/{name}"


def sandbox_claims_path(namespace: str) -> str:
    return _namespaced(namespace, SANDBOX_CLAIMS)


def sandbox_claim_path(namespace: str, name: str) -> str:
    return f"{sandbox_claims_path(namespace)}/{_segment(name)}"
