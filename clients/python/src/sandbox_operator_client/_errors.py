"""The client's errors: the fence (SandboxDeletingError), a squatted reference name
(SessionReferenceConflictError) and a failed request (KubeRequestError), all under SandboxOperatorClientError,
each with its cause chained (`raise ... from`)."""

import json
from typing import Literal

from ._fence import FenceKind
from ._reattach import FixedField, ReattachJudgement
from ._withdrawal import Withdrawal

#: The failing step of a request, as the TypeScript client names it.
KubeStep = Literal["List", "Get", "Watch", "Create", "Delete", "Patch", "PatchStatus"]
#: Why the fence refused an attach.
FenceReason = Literal["Deleting", "CleanupFenced", "Gone", "Unreadable"]


class SandboxOperatorClientError(Exception):
    """Every error this client raises."""


class ApiAnswerError(Exception):
    """The API server answered with an error status: the cause of a KubeRequestError."""

    def __init__(self, status: int, body: str) -> None:
        self.status = status
        self.body = body
        super().__init__(f"HTTP {status}: {_message_of(body)}")


def _message_of(body: str) -> str:
    try:
        parsed = json.loads(body)
    except ValueError:
        return body[:500]
    message = parsed.get("message") if isinstance(parsed, dict) else None
    return message if isinstance(message, str) else body[:500]


class KubeRequestError(SandboxOperatorClientError):
    """An API call failed: `step` (e.g. Create, Patch), `target` (e.g. sessionreference ns/name), and the
    HTTP `status` when there was an answer (None when there was none: refused, reset, timed out)."""

    kind: Literal["KubeRequestFailed"] = "KubeRequestFailed"

    def __init__(self, step: KubeStep, target: str, status: int | None, cause: BaseException) -> None:
        self.step: KubeStep = step
        self.target = target
        self.status = status
        detail = (
            _message_of(cause.body)
            if isinstance(cause, ApiAnswerError)
            else str(cause) or type(cause).__name__
        )
        answer = "" if status is None else f" with HTTP {status}"
        super().__init__(f"{step} {target} failed{answer}: {detail}")
        self.__cause__ = cause

    @property
    def not_found(self) -> bool:
        return self.status == 404

    @property
    def conflict(self) -> bool:
        return self.status == 409


class SandboxDeletingError(SandboxOperatorClientError):
    """The fence: the sandbox is being deleted (`since` set), fenced by automatic cleanup (`since` set), gone,
    or could not be read (treated as deleting). The attach was withdrawn as `withdrawal` says. Do not start
    the session in this sandbox; choose or create another one."""

    kind: Literal["SandboxDeleting"] = "SandboxDeleting"

    def __init__(
        self,
        namespace: str,
        sandbox: str,
        since: str | None,
        withdrawal: Withdrawal,
        reason: FenceReason,
        problem: str | None = None,
    ) -> None:
        self.namespace = namespace
        self.sandbox = sandbox
        self.since = since
        self.withdrawal: Withdrawal = withdrawal
        self.reason: FenceReason = reason
        self.problem = problem
        what = f"sandbox {namespace}/{sandbox}"
        if reason == "Gone":
            message = f"{what} does not exist; the attach was withdrawn ({withdrawal})"
        elif reason == "Unreadable":
            message = (
                f"{what} could not be read ({problem or 'unreadable'}), so it is treated as being deleted; "
                f"the attach was refused and withdrawn ({withdrawal})"
            )
        else:
            message = f"{what} is being deleted (since {since}); the attach was refused and withdrawn ({withdrawal})"
        super().__init__(message)


class SessionReferenceConflictError(SandboxOperatorClientError):
    """The attach found a reference under its name whose fixed fields are not its own (`field`: the first that
    differs; `requested` and `found`, None for absent): a squat, or a session id reused for another worktree.
    Nothing was written; the object is left as it was found."""

    kind: Literal["SessionReferenceConflict"] = "SessionReferenceConflict"

    def __init__(self, namespace: str, reference: str, differs: ReattachJudgement) -> None:
        if differs.field is None:
            raise ValueError("a judgement of Same is no conflict")
        self.namespace = namespace
        self.reference = reference
        self.field: FixedField = differs.field
        self.requested = differs.requested
        self.found = differs.found

        def show(value: str | None) -> str:
            return "none" if value is None else json.dumps(value)

        super().__init__(
            f"sessionreference {namespace}/{reference} already exists with spec.{self.field} {show(self.found)}, "
            f"not {show(self.requested)} as this attach asks: it was not created for this session, so it is not "
            "re-attached (nothing was written; choose another session id, or have an administrator remove it)"
        )


def fence_reason(kind: FenceKind) -> FenceReason:
    if kind == "Open":
        raise ValueError("an open fence refuses nothing")
    return kind


class ForgetDeadlineError(SandboxOperatorClientError, TimeoutError):
    """forget did not finish within its deadline; the delete may still land."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        super().__init__(f"forget did not finish within {deadline:g} s")


class SandboxResumeForbiddenError(SandboxOperatorClientError):
    """The sandbox is suspended by its spec and this identity may not patch it to Running (HTTP 403). The
    reference stays Attached."""

    kind: Literal["SandboxResumeForbidden"] = "SandboxResumeForbidden"

    def __init__(self, namespace: str, sandbox: str) -> None:
        self.namespace = namespace
        self.sandbox = sandbox
        super().__init__(
            f"sandbox {namespace}/{sandbox} is suspended (spec.operatingMode: Suspended) and this identity may not "
            "patch it to Running (HTTP 403); the session stays attached: grant it patch on sandboxes, or have "
            "someone who may set spec.operatingMode: Running"
        )


class SandboxNotReadyError(SandboxOperatorClientError):
    """wait_ready ended without a Ready sandbox: its deadline passed (`reason` Deadline), or the sandbox is
    being deleted or gone. The reference stays Attached."""

    kind: Literal["SandboxNotReady"] = "SandboxNotReady"

    def __init__(
        self,
        namespace: str,
        sandbox: str,
        reason: Literal["Deadline", "Deleting", "Gone"],
        deadline: float,
        seen: str,
    ) -> None:
        self.namespace = namespace
        self.sandbox = sandbox
        self.reason = reason
        self.deadline = deadline
        self.seen = seen
        what = f"sandbox {namespace}/{sandbox}"
        super().__init__(
            f"{what} was not Ready within {deadline:g} s (last seen: {seen}); the session stays attached"
            if reason == "Deadline"
            else f"{what} {'is gone' if reason == 'Gone' else 'is being deleted'}; it will not become Ready"
        )


class SandboxClaimNotReadyError(SandboxOperatorClientError):
    """claim() ended without a bound, Ready claim: its deadline passed (`reason` Deadline; `seen` says what
    its conditions said), or the claim is being deleted or gone. A claim past its deadline is kept: delete it
    (release()) to give it up, or wait on it again (wait_until_ready())."""

    kind: Literal["SandboxClaimNotReady"] = "SandboxClaimNotReady"

    def __init__(
        self,
        namespace: str,
        claim: str,
        reason: Literal["Deadline", "Deleting", "Gone"],
        deadline: float,
        seen: str,
    ) -> None:
        self.namespace = namespace
        self.claim = claim
        self.reason = reason
        self.deadline = deadline
        self.seen = seen
        what = f"sandboxclaim {namespace}/{claim}"
        super().__init__(
            f"{what} was not bound and Ready within {deadline:g} s (last seen: {seen}); the claim is kept, "
            "delete it to give it up"
            if reason == "Deadline"
            else f"{what} {'is gone' if reason == 'Gone' else 'is being deleted'}; it will not become Ready"
        )
