"""The calls' requests and outcomes. Outcomes that are expected (a forget that failed, a report already made)
are values, as in the TypeScript client; only the fence and failed requests raise."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from ._vocabulary import Role, TurnOrigin, TurnPhase


@dataclass(frozen=True, kw_only=True)
class AttachRequest:
    """One session's use of one sandbox. `session`, `worktree` and `parent_session` are identifiers
    (letters, digits, `_`, `,`, `:`), fixed once the reference exists; `parent_session` is required for
    a Subagent. A reference without a worktree is foreign to every sandbox: it always blocks a deletion."""

    namespace: str
    sandbox: str
    session: str
    route: str
    role: Role
    worktree: str | None = None
    parent_session: str | None = None


@dataclass(frozen=True)
class Forgotten:
    kind: ClassVar[str] = "Forgotten"


@dataclass(frozen=True)
class AlreadyGone:
    kind: ClassVar[str] = "AlreadyGone"


@dataclass(frozen=True)
class ForgetFailed:
    """The delete failed or did not finish within the deadline (it may still land)."""

    error: Exception
    kind: ClassVar[str] = "Failed"


ForgetResult = Forgotten | AlreadyGone | ForgetFailed


@dataclass(frozen=True, kw_only=True)
class TurnRecord:
    id: str
    phase: TurnPhase
    origin: TurnOrigin
    #: Origins of messages steered into the turn, in any number: stored as their distinct set.
    joined_origins: Sequence[TurnOrigin] = field(default_factory=tuple)


@dataclass(frozen=True, kw_only=True)
class ReportRequest:
    namespace: str
    #: The child's SessionReference.
    reference: str
    child_session: str
    #: The parent's delegation this turn answers.
    delegation_id: str
    delegation: Literal["Answered", "Unanswered"]
    turn_id: str


ReportReason = Literal[
    "DelegationUnanswered",
    "ProjectionUnreadable",
    "TurnSuperseded",
    "Resumption",
    "SteeredResumption",
    "JoinUnrecorded",
    "HostNoticeTurn",
]


@dataclass(frozen=True)
class CompletionReport:
    """The rule's verdict: report (with why, and the key) or not (a host notice of an answered delegation)."""

    report: bool
    reason: ReportReason
    key: str | None = None


@dataclass(frozen=True)
class Reported:
    """The parent must hear (and `deliver` was called); the key is spent on the reference."""

    report: CompletionReport
    kind: ClassVar[str] = "Reported"


@dataclass(frozen=True)
class AlreadyReported:
    key: str
    kind: ClassVar[str] = "AlreadyReported"


@dataclass(frozen=True)
class NotReported:
    reason: Literal["HostNoticeTurn"] = "HostNoticeTurn"
    kind: ClassVar[str] = "NotReported"


ReportOutcome = Reported | AlreadyReported | NotReported
