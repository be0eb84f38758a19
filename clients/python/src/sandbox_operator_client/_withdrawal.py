"""What a refused attach undoes, pure: exactly what its own write did (operator/client/withdrawal.ts; cases in
test/conformance/vectors/withdrawal.json). A reference it created is deleted, preconditioned on what it
created; one that existed gets its earlier state and route back, preconditioned on the attach's write, and is
never deleted, since it may be what blocks the deletion."""

from dataclasses import dataclass
from typing import Literal

from ._json import JsonObject


@dataclass(frozen=True)
class Created:
    """The attach created the reference."""

    uid: str
    resource_version: str


@dataclass(frozen=True)
class Reattached:
    """The reference existed; this is what the re-attach found (None where it could not be read)."""

    before_state: str | None
    before_route: str | None
    resource_version: str


AttachWrite = Created | Reattached

#: What a refused attach did with the reference it had written: Deleted (it had created it), Restored (its
#: earlier state and route are back), Unchanged (it was already Attached with this route), LeftChanged
#: (someone wrote it after the attach: left as they made it; an extra reference only blocks a deletion).
Withdrawal = Literal["Deleted", "Restored", "Unchanged", "LeftChanged"]


@dataclass(frozen=True)
class WithdrawalPlan:
    kind: Literal["Delete", "Restore", "Nothing"]
    #: Delete: the DELETE's preconditions (uid, resourceVersion).
    preconditions: JsonObject | None = None
    #: Restore: the merge patch that puts the earlier state back.
    patch: JsonObject | None = None


def plan_withdrawal(written: AttachWrite, route: str) -> WithdrawalPlan:
    if isinstance(written, Created):
        return WithdrawalPlan(
            "Delete",
            preconditions={"uid": written.uid, "resourceVersion": written.resource_version},
        )
    if written.before_state == "Attached" and written.before_route == route:
        return WithdrawalPlan("Nothing")
    return WithdrawalPlan(
        "Restore",
        patch={
            "metadata": {"resourceVersion": written.resource_version},
            "spec": {
                "state": written.before_state if written.before_state is not None else "Attached",
                "route": written.before_route if written.before_route is not None else route,
            },
        },
    )
