"""record_turn and report_once as sans-I/O flows (_protocol.py), step for step as the TypeScript client's
operator/client/completion-reports.ts does them (docs/client.md, "Turns and reporting to the parent once").

report_once delivers first and records the key after: a crash between the two delivers again with the same
key (a duplicate the parent can drop by key), never silence. An unreadable reference reports.
"""

from ._errors import KubeRequestError
from ._json import child
from ._names import reported_annotation
from ._paths import reference_path, reference_target
from ._protocol import JSON_PATCH, MERGE_PATCH, Call, Flow, request
from ._report import Deliver, decide_report, turn_status_patch
from ._types import Reported, ReportOutcome, ReportRequest, TurnRecord

#: A write that keeps losing the race to other writers gives up after this many attempts.
WRITE_ATTEMPTS = 5


def record_turn(namespace: str, reference: str, turn: TurnRecord, now: str) -> Flow[None]:
    """Writes status.turn (and, for an ended turn, status.endedTurns), preconditioned on what it read."""
    target, path = reference_target(namespace, reference), reference_path(namespace, reference)
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        stored = yield from request(Call("Get", target, "GET", path))
        body = turn_status_patch(stored, turn, now)
        try:
            yield from request(
                Call("PatchStatus", target, "PATCH", f"{path}/status", body=body, content_type=MERGE_PATCH)
            )
        except KubeRequestError as error:
            if error.status != 409 or attempt >= WRITE_ATTEMPTS:
                raise
            continue
        return


def report_once(req: ReportRequest) -> Flow[ReportOutcome]:
    """Decides, yields a Deliver when the parent must hear, then spends the key on the reference."""
    target, path = (
        reference_target(req.namespace, req.reference),
        reference_path(req.namespace, req.reference),
    )
    stored: object
    try:
        stored = yield from request(Call("Get", target, "GET", path))
    except KubeRequestError:
        # Unreadable: the rule fails open; the key cannot be checked, so this may be a duplicate.
        stored = None
    decision = decide_report(req, stored)
    if not isinstance(decision, Deliver):
        return decision
    outcome = Reported(decision.report)
    yield Deliver(decision.report)
    if stored is not None:
        yield from _spend(req, reported_annotation(req.delegation_id), stored)
    return outcome


def _spend(req: ReportRequest, annotation: str, stored: object) -> Flow[None]:
    """Records the spent key, preconditioned on the version read; a racing spender's key wins harmlessly."""
    target, path = (
        reference_target(req.namespace, req.reference),
        reference_path(req.namespace, req.reference),
    )
    escaped = annotation.replace("~", "~0").replace("/", "~1")
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        metadata = child(stored, "metadata")
        patch: list[object] = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": child(metadata, "resourceVersion")}
        ]
        if child(metadata, "annotations") is None:
            patch.append({"op": "add", "path": "/metadata/annotations", "value": {}})
        patch.append({"op": "add", "path": f"/metadata/annotations/{escaped}", "value": req.turn_id})
        try:
            yield from request(Call("Patch", target, "PATCH", path, body=patch, content_type=JSON_PATCH))
            return
        except KubeRequestError as error:
            # Someone wrote the reference since (409, or 422 from the failed test): spend again on fresh state.
            if error.status not in (409, 422) or attempt >= WRITE_ATTEMPTS:
                raise
        stored = yield from request(Call("Get", target, "GET", path))
        if child(child(child(stored, "metadata"), "annotations"), annotation) == req.turn_id:
            return
