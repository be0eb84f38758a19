"""sandbox-operator's client for agent hosts: record which sessions use which sandbox (SessionReferences),
with the fence check that makes a shared sandbox safe to delete, and report subagent completions to their
parent once (CompletionReports). Blocking and asyncio APIs alike; docs/client.md in the repository
documents each call, its guarantees and its errors, side by side with the TypeScript client."""

from ._aio import AsyncCompletionReports, AsyncSandboxClaims, AsyncSessionReferences, load_async_api_client
from ._claim import ClaimRequest, ClaimResult, LaunchType
from ._errors import (
    ApiAnswerError,
    FenceReason,
    ForgetDeadlineError,
    KubeRequestError,
    KubeStep,
    SandboxClaimNotReadyError,
    SandboxDeletingError,
    SandboxNotReadyError,
    SandboxOperatorClientError,
    SandboxResumeForbiddenError,
    SessionReferenceConflictError,
)
from ._names import report_key, reported_annotation, session_reference_name
from ._reattach import FixedField
from ._sync import CompletionReports, SandboxClaims, SessionReferences, load_api_client
from ._types import (
    AlreadyGone,
    AlreadyReported,
    AttachRequest,
    CompletionReport,
    ForgetFailed,
    ForgetResult,
    Forgotten,
    NotReported,
    Reported,
    ReportOutcome,
    ReportReason,
    ReportRequest,
    TurnRecord,
)
from ._vocabulary import API_VERSION, CLIENT_USER_AGENT, GROUP, Role, TurnOrigin, TurnPhase
from ._withdrawal import Withdrawal

__all__ = [
    "API_VERSION",
    "CLIENT_USER_AGENT",
    "GROUP",
    "AlreadyGone",
    "AlreadyReported",
    "ApiAnswerError",
    "AsyncCompletionReports",
    "AsyncSandboxClaims",
    "AsyncSessionReferences",
    "AttachRequest",
    "ClaimRequest",
    "ClaimResult",
    "CompletionReport",
    "CompletionReports",
    "FenceReason",
    "FixedField",
    "ForgetDeadlineError",
    "ForgetFailed",
    "ForgetResult",
    "Forgotten",
    "KubeRequestError",
    "KubeStep",
    "LaunchType",
    "NotReported",
    "ReportOutcome",
    "ReportReason",
    "ReportRequest",
    "Reported",
    "Role",
    "SandboxClaimNotReadyError",
    "SandboxClaims",
    "SandboxDeletingError",
    "SandboxNotReadyError",
    "SandboxOperatorClientError",
    "SandboxResumeForbiddenError",
    "SessionReferenceConflictError",
    "SessionReferences",
    "TurnOrigin",
    "TurnPhase",
    "TurnRecord",
    "Withdrawal",
    "load_api_client",
    "load_async_api_client",
    "report_key",
    "reported_annotation",
    "session_reference_name",
]
