"""An attach to a suspended sandbox, pure; the same rules as the TypeScript client's operator/client/resume.ts,
held to the same cases (test/conformance/vectors/resume.json). Read from the raw answer, as the fence is.

- Suspended by its spec (`spec.operatingMode: Suspended`): the attach resumes it, by a JSON Patch of
  `spec.operatingMode: Running` that tests the version it read.
- Suspended as idle (`spec.idle`): the attach's own Attached reference resumes it; nothing to write.
- Ready: `Ready=True`, recorded for the sandbox's current generation (a resume by spec bumps it).
"""

from dataclasses import dataclass
from typing import Literal

from ._json import JsonObject, child, is_object


@dataclass(frozen=True)
class ResumeJudgement:
    kind: Literal["Running", "Idle", "Resume"]
    #: For Resume: the version the patch tests.
    resource_version: str | None = None


@dataclass(frozen=True)
class Readiness:
    kind: Literal["Ready", "NotReady", "Deleting", "Gone"]
    #: For NotReady: the phase and Ready reason read.
    seen: str | None = None


def _condition(body: object, kind: str) -> JsonObject | None:
    conditions = child(child(body, "status"), "conditions")
    if not isinstance(conditions, list):
        return None
    for condition in conditions:
        if is_object(condition) and condition.get("type") == kind:
            return condition
    return None


def judge_resume(body: object) -> ResumeJudgement:
    if child(child(body, "spec"), "operatingMode") == "Suspended":
        version = child(child(body, "metadata"), "resourceVersion")
        return ResumeJudgement("Resume", version if isinstance(version, str) else "")
    suspended = _condition(body, "Suspended")
    return ResumeJudgement(
        "Idle" if suspended is not None and suspended.get("status") == "True" else "Running"
    )


def judge_readiness(body: object, gone: bool = False) -> Readiness:
    if gone:
        return Readiness("Gone")
    metadata = child(body, "metadata")
    if child(metadata, "deletionTimestamp") is not None:
        return Readiness("Deleting")
    ready = _condition(body, "Ready")
    generation = child(metadata, "generation")
    observed = ready.get("observedGeneration") if ready is not None else None
    current = generation is None or observed == generation
    if ready is not None and ready.get("status") == "True" and current:
        return Readiness("Ready")
    phase = child(child(body, "status"), "phase")
    reason = ready.get("reason") if ready is not None else None
    return Readiness(
        "NotReady",
        f"phase {phase if isinstance(phase, str) else 'unknown'}, "
        f"Ready {reason if isinstance(reason, str) else 'not reported'}",
    )
