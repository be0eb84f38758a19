"""Whether an attach may re-attach the reference it found under its name, pure (issue 26, item 8); the same
rule as the TypeScript client's operator/client/reattach.ts, held to the same cases
(test/conformance/vectors/reattach.json).

The name is derived from (sandbox, session), so anyone with create rights can pre-create it with other fixed
fields: another worktree makes the session count as that worktree's (the sandbox could be destroyed under
it), another sandbox makes it count for none it uses. So only a reference whose every fixed field is the one
the attach asks for is re-attached. The fields are immutable (the CRD's rules), so the version compared is
the one the re-attach's patch is preconditioned on.
"""

from dataclasses import dataclass
from typing import Literal

from ._json import child, is_object
from ._types import AttachRequest

FixedField = Literal["sandbox", "session", "worktree", "role", "parentSession"]


@dataclass(frozen=True)
class ReattachJudgement:
    """Same, or the first fixed field that Differs; None for absent (or, stored, not a string)."""

    kind: Literal["Same", "Differs"]
    field: FixedField | None = None
    requested: str | None = None
    found: str | None = None


def _fixed(req: AttachRequest) -> list[tuple[FixedField, str | None]]:
    """The fixed fields, in the order they are compared."""
    return [
        ("sandbox", req.sandbox),
        ("session", req.session),
        ("worktree", req.worktree),
        ("role", req.role),
        ("parentSession", req.parent_session),
    ]


def judge_reattach(req: AttachRequest, stored: object) -> ReattachJudgement:
    spec = child(stored, "spec") if is_object(stored) else None
    for field, wanted in _fixed(req):
        value = child(spec, field)
        found = value if isinstance(value, str) else None
        if found != wanted:
            return ReattachJudgement("Differs", field, wanted, found)
    return ReattachJudgement("Same")
