"""The API's names and enumerations the client relies on (operator/api in the repository: names.ts,
session-reference.ts). Renaming any of these breaks every host and GitOps repository, so they never change
without the API's version."""

from typing import Final, Literal

GROUP: Final = "sandbox.agents.dev"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
SANDBOXES: Final = "sandboxes"
SESSION_REFERENCES: Final = "sessionreferences"
SESSION_REFERENCE_KIND: Final = "SessionReference"
SANDBOX_CLAIMS: Final = "sandboxclaims"
SANDBOX_CLAIM_KIND: Final = "SandboxClaim"

#: The User-Agent the client's own loaders give their ApiClient: audit logs must never take a host's requests
#: for the operator's (whose agent is "sandbox-operator"). Name your host instead with `user_agent=`.
CLIENT_USER_AGENT: Final = "sandbox-operator-client-python"

#: On a Sandbox, written by the operator before automatic cleanup deletes it: a fence an attach honours.
CLEANUP_FENCE_ANNOTATION: Final = f"{GROUP}/cleanup-fence"
#: Annotations holding the last reported turn of each delegation; the name is a hash of the delegation.
REPORTED_ANNOTATION_PREFIX: Final = f"report.{GROUP}/"

Role = Literal["Root", "Subagent", "Board", "Ticket"]
TurnPhase = Literal["Running", "Completed", "Failed", "Interrupted"]
TURN_PHASES: Final = ("Running", "Completed", "Failed", "Interrupted")
ENDED_PHASES: Final = ("Completed", "Failed", "Interrupted")
#: Ended turns the status remembers besides the latest.
ENDED_TURNS_MAX: Final = 32
#: The schema's bound on a turn's joined origins.
JOINED_ORIGINS_MAX: Final = 16

TurnOrigin = Literal[
    "ShellNotice",
    "WatchNotice",
    "BrowserNotice",
    "SubagentNotice",
    "WorktreeNotice",
    "PersonMessage",
    "ParentMessage",
    "Automation",
    "RelaunchRecovery",
    "ScheduledResume",
    "Supervision",
    "Unknown",
]
TURN_ORIGINS: Final[tuple[TurnOrigin, ...]] = (
    "ShellNotice",
    "WatchNotice",
    "BrowserNotice",
    "SubagentNotice",
    "WorktreeNotice",
    "PersonMessage",
    "ParentMessage",
    "Automation",
    "RelaunchRecovery",
    "ScheduledResume",
    "Supervision",
    "Unknown",
)
#: Turns the host opened by itself (docs/sidecar.md, "Completion reports to the parent"). Every other origin,
#: one not attributed (Unknown) included, is a resumption the parent must hear of.
HOST_NOTICES: Final[frozenset[TurnOrigin]] = frozenset(
    {"ShellNotice", "WatchNotice", "BrowserNotice", "SubagentNotice", "WorktreeNotice"}
)
