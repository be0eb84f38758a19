"""The report-to-parent-once rule and what recordTurn writes, pure (docs/sidecar.md "Completion reports to
the parent"; the TypeScript client's report-rule.ts and report-facts.ts; cases in
test/conformance/vectors/report.json and ended-turns.json).

The parent hears once per resumption. A turn opened by a host notice of an already-answered delegation
reports nothing new; every other origin reports: a deny-list, so an origin nobody attributed (Unknown) never
silences a real resumption. Whatever cannot be read reports (fails open): a duplicate carries the same key,
which the parent can drop; silence is the worse failure.
"""

from dataclasses import dataclass

from ._json import JsonObject, child, is_object
from ._names import report_key, reported_annotation
from ._types import (
    AlreadyReported,
    CompletionReport,
    NotReported,
    ReportRequest,
    TurnRecord,
)
from ._vocabulary import (
    ENDED_PHASES,
    ENDED_TURNS_MAX,
    HOST_NOTICES,
    JOINED_ORIGINS_MAX,
    TURN_ORIGINS,
    TURN_PHASES,
    TurnOrigin,
)


@dataclass(frozen=True)
class LatestTurn:
    id: str
    origin: TurnOrigin
    joined_origins: tuple[TurnOrigin, ...] | None


@dataclass(frozen=True)
class Deliver:
    """The parent must hear: deliver, then spend the key."""

    report: CompletionReport


def _origin(value: object) -> TurnOrigin | None:
    for origin in TURN_ORIGINS:
        if value == origin:
            return origin
    return None


def read_latest_turn(stored: object) -> LatestTurn | None:
    """The reference's status.turn; None when there is none or it cannot be read."""
    turn = child(child(stored, "status"), "turn")
    if not is_object(turn):
        return None
    turn_id, phase = turn.get("id"), turn.get("phase")
    raw_origin = turn.get("origin")
    origin = "Unknown" if raw_origin is None else _origin(raw_origin)
    if not isinstance(turn_id, str) or phase not in TURN_PHASES or origin is None:
        return None
    joined = turn.get("joinedOrigins")
    if joined is None:
        return LatestTurn(turn_id, origin, None)
    if not isinstance(joined, list) or len(joined) > JOINED_ORIGINS_MAX:
        return None
    origins = tuple(_origin(value) for value in joined)
    if any(o is None for o in origins):
        return None
    return LatestTurn(turn_id, origin, tuple(o for o in origins if o is not None))


def decide_completion_report(request: ReportRequest, latest: LatestTurn | None) -> CompletionReport:
    """The rule (the TypeScript client's decideCompletionReport), for the turn as the reference shows it."""
    key = report_key(request.delegation_id, request.turn_id)
    if request.delegation == "Unanswered":
        return CompletionReport(True, "DelegationUnanswered", key)
    if latest is None:
        return CompletionReport(True, "ProjectionUnreadable", key)
    if latest.id != request.turn_id:
        return CompletionReport(True, "TurnSuperseded", key)
    if latest.origin not in HOST_NOTICES:
        return CompletionReport(True, "Resumption", key)
    if latest.joined_origins is None:
        return CompletionReport(True, "JoinUnrecorded", key)
    if any(origin not in HOST_NOTICES for origin in latest.joined_origins):
        return CompletionReport(True, "SteeredResumption", key)
    return CompletionReport(False, "HostNoticeTurn")


def reported_turn(stored: object, delegation_id: str) -> object:
    """The turn the reference's annotation says was reported for the delegation, if any."""
    annotations = child(child(stored, "metadata"), "annotations")
    return child(annotations, reported_annotation(delegation_id))


def decide_report(request: ReportRequest, stored: object) -> Deliver | AlreadyReported | NotReported:
    """What report_once does before any delivery; `stored` is the child's reference as read (None: unread)."""
    decision = decide_completion_report(request, read_latest_turn(stored))
    if not decision.report:
        return NotReported()
    if reported_turn(stored, request.delegation_id) == request.turn_id:
        assert decision.key is not None  # every report carries its key
        return AlreadyReported(decision.key)
    return Deliver(decision)


def turn_status_patch(stored: object, turn: TurnRecord, now: str) -> JsonObject:
    """The merge patch record_turn writes: status.turn (joined origins as their distinct set, first seen
    first) and, for an ended turn, status.endedTurns with it appended once, the oldest dropped past 32.
    Ended turns that cannot be read are left out."""
    resource_version = child(child(stored, "metadata"), "resourceVersion")
    listed = child(child(stored, "status"), "endedTurns")
    ended: list[JsonObject] = [
        {"id": t["id"], "phase": t["phase"]}
        for t in (listed if isinstance(listed, list) else [])
        if is_object(t)
        and isinstance(t.get("id"), str)
        and t.get("phase") in ENDED_PHASES
        and t["id"] != turn.id
    ]
    status: JsonObject = {
        "turn": {
            "id": turn.id,
            "phase": turn.phase,
            "origin": turn.origin,
            "joinedOrigins": list(dict.fromkeys(turn.joined_origins)),
            "updatedAt": now,
        }
    }
    if turn.phase != "Running":
        status["endedTurns"] = [*ended, {"id": turn.id, "phase": turn.phase}][-ENDED_TURNS_MAX:]
    metadata: JsonObject = {"resourceVersion": resource_version} if isinstance(resource_version, str) else {}
    return {"metadata": metadata, "status": status}
