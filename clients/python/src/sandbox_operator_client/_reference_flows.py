"""attach, detach, forget and prune_worktree as sans-I/O flows (_protocol.py), step for step as the TypeScript
client's operator/client/session-references.ts does them (docs/client.md).

attach writes the reference, then reads the Sandbox live; if the fence is up (being deleted, fenced by
automatic cleanup, gone, or unreadable) it withdraws what it wrote and raises SandboxDeletingError. The
controller LISTs references only after the deletion's own write, so either the controller sees the
reference or the attach sees the deletion (docs/adr/0003-attach-handshake.md).
"""

import json

from ._disruption import DisruptionNotice, read_disruption
from ._errors import (
    KubeRequestError,
    SandboxDeletingError,
    SandboxResumeForbiddenError,
    SessionReferenceConflictError,
    fence_reason,
)
from ._fence import FenceJudgement, SandboxRead, judge_fence
from ._json import JsonObject, child
from ._names import session_reference_name
from ._paths import reference_path, reference_target, references_path, sandbox_path
from ._protocol import (
    GONE,
    JSON_PATCH,
    MERGE_PATCH,
    Call,
    Flow,
    decode,
    failure,
    request,
    request_unless_gone,
    send,
)
from ._reattach import judge_reattach
from ._resume import Readiness, judge_readiness, judge_resume
from ._types import AlreadyGone, AttachRequest, ForgetResult, Forgotten
from ._vocabulary import API_VERSION, SESSION_REFERENCE_KIND
from ._withdrawal import AttachWrite, Created, Reattached, Withdrawal, plan_withdrawal

#: A re-attach that keeps losing the race to other writers gives up after this many reads.
REATTACH_ATTEMPTS = 5
#: A resume that keeps meeting a changed Sandbox gives up after this many reads.
RESUME_ATTEMPTS = 5


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _spec(req: AttachRequest) -> JsonObject:
    spec: JsonObject = {"sandbox": req.sandbox, "session": req.session}
    if req.worktree is not None:
        spec["worktree"] = req.worktree
    spec.update({"route": req.route, "role": req.role})
    if req.parent_session is not None:
        spec["parentSession"] = req.parent_session
    return spec


def attach(req: AttachRequest, resume: bool = True) -> Flow[str]:
    name = session_reference_name(req.sandbox, req.session)
    written = yield from _write_attached(req, name)
    # The fence check reads the Sandbox live, after the reference is written.
    read = yield from _read_sandbox(req.namespace, req.sandbox)
    fence = judge_fence(read)
    if fence.kind == "Open":
        if resume and read.kind == "Json":
            yield from _resume(req.namespace, req.sandbox, read.body)
        return name
    withdrawal = yield from _withdraw(req.namespace, name, written, req.route)
    raise _refusal(req, fence, withdrawal)


def _resume(namespace: str, sandbox: str, body: object) -> Flow[None]:
    """Resumes a sandbox suspended by its spec (_resume.py): a JSON Patch that tests the version read, so a
    change since (another resume, a re-suspension) is read again, never overwritten."""
    what, path = f"sandbox {namespace}/{sandbox}", sandbox_path(namespace, sandbox)
    current = body
    for attempt in range(1, RESUME_ATTEMPTS + 1):
        judgement = judge_resume(current)
        if judgement.kind != "Resume":
            return
        patch = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": judgement.resource_version},
            {"op": "replace", "path": "/spec/operatingMode", "value": "Running"},
        ]
        try:
            yield from request(Call("Patch", what, "PATCH", path, body=patch, content_type=JSON_PATCH))
            return
        except KubeRequestError as error:
            if error.status == 403:
                raise SandboxResumeForbiddenError(namespace, sandbox) from error
            if error.status not in (409, 422) or attempt >= RESUME_ATTEMPTS:
                raise
        current = yield from request_unless_gone(Call("Get", what, "GET", path))


def readiness(namespace: str, sandbox: str) -> Flow[Readiness]:
    """One read of the sandbox a wait_ready waits on (the shells sleep between reads)."""
    path = sandbox_path(namespace, sandbox)
    body = yield from request_unless_gone(Call("Get", f"sandbox {namespace}/{sandbox}", "GET", path))
    return judge_readiness(None, gone=True) if body is GONE else judge_readiness(body)


def _read_sandbox(namespace: str, sandbox: str) -> Flow[SandboxRead]:
    call = Call("Get", f"sandbox {namespace}/{sandbox}", "GET", sandbox_path(namespace, sandbox))
    reply = yield from send(call)
    if reply.status == 404:
        return SandboxRead("Gone")
    if not reply.ok:
        raise failure(call, reply)
    try:
        return SandboxRead("Json", json.loads(reply.body))
    except ValueError:
        # A success whose body is not JSON: the fence cannot be read, which the judgement treats as deleting.
        return SandboxRead("NotJson")


def _write_attached(req: AttachRequest, name: str) -> Flow[AttachWrite]:
    target = reference_target(req.namespace, name)
    body = {
        "apiVersion": API_VERSION,
        "kind": SESSION_REFERENCE_KIND,
        "metadata": {"name": name, "namespace": req.namespace},
        "spec": {**_spec(req), "state": "Attached"},
    }
    create = Call("Create", target, "POST", references_path(req.namespace), body=body)
    reply = yield from send(create)
    if reply.ok:
        metadata = child(decode(create, reply), "metadata")
        return Created(_text(child(metadata, "uid")) or "", _text(child(metadata, "resourceVersion")) or "")
    if reply.status != 409:
        raise failure(create, reply)
    # Re-attach: the reference (perhaps a tombstone) exists. Only this session's own is re-attached (a squat
    # is refused, _reattach.py). Remember what it was, then make it Attached with the new route,
    # preconditioned on the version just read so the remembered state is the one replaced.
    path = reference_path(req.namespace, name)
    for attempt in range(1, REATTACH_ATTEMPTS + 1):
        current = yield from request(Call("Get", target, "GET", path))
        judgement = judge_reattach(req, current)
        if judgement.kind == "Differs":
            raise SessionReferenceConflictError(req.namespace, name, judgement)
        patch = {
            "metadata": {"resourceVersion": child(child(current, "metadata"), "resourceVersion")},
            "spec": {"state": "Attached", "route": req.route},
        }
        try:
            patched = yield from request(
                Call("Patch", target, "PATCH", path, body=patch, content_type=MERGE_PATCH)
            )
        except KubeRequestError as error:
            if error.status != 409 or attempt >= REATTACH_ATTEMPTS:
                raise
            continue
        spec = child(current, "spec")
        return Reattached(
            _text(child(spec, "state")),
            _text(child(spec, "route")),
            _text(child(child(patched, "metadata"), "resourceVersion")) or "",
        )
    raise AssertionError("unreachable: the last attempt returns or raises")


def _withdraw(namespace: str, name: str, written: AttachWrite, route: str) -> Flow[Withdrawal]:
    target, path = reference_target(namespace, name), reference_path(namespace, name)
    plan = plan_withdrawal(written, route)
    try:
        if plan.kind == "Nothing":
            return "Unchanged"
        if plan.kind == "Delete":
            body = {"preconditions": plan.preconditions}
            yield from request_unless_gone(Call("Delete", target, "DELETE", path, body=body))
            return "Deleted"
        yield from request(Call("Patch", target, "PATCH", path, body=plan.patch, content_type=MERGE_PATCH))
        return "Restored"
    except KubeRequestError as error:
        # A conflict means another writer changed the reference since this attach wrote it: what they wrote
        # stands. Leaving a reference in place can only block a destruction, never cause one.
        if error.status == 409:
            return "LeftChanged"
        raise


def _refusal(req: AttachRequest, fence: FenceJudgement, withdrawal: Withdrawal) -> SandboxDeletingError:
    reason = fence_reason(fence.kind)
    return SandboxDeletingError(req.namespace, req.sandbox, fence.since, withdrawal, reason, fence.problem)


def detach(namespace: str, sandbox: str, session: str, now: str) -> Flow[None]:
    """Marks the reference Detached (a tombstone that still blocks) and records status.detachedAt = now."""
    name = session_reference_name(sandbox, session)
    target, path = reference_target(namespace, name), reference_path(namespace, name)
    spec = {"spec": {"state": "Detached"}}
    yield from request(Call("Patch", target, "PATCH", path, body=spec, content_type=MERGE_PATCH))
    status = {"status": {"detachedAt": now}}
    yield from request(
        Call("PatchStatus", target, "PATCH", f"{path}/status", body=status, content_type=MERGE_PATCH)
    )


def disruption(namespace: str, sandbox: str, session: str) -> Flow[DisruptionNotice | None]:
    """The drain notice on the session's reference (status.disruption); None when there is none or it is gone."""
    name = session_reference_name(sandbox, session)
    call = Call("Get", reference_target(namespace, name), "GET", reference_path(namespace, name))
    body = yield from request_unless_gone(call)
    return None if body is GONE else read_disruption(body)


def forget(namespace: str, sandbox: str, session: str, timeout: float | None) -> Flow[ForgetResult]:
    """Deletes the reference. A failure raises here; the shells turn it (and the deadline) into a value."""
    name = session_reference_name(sandbox, session)
    call = Call(
        "Delete",
        reference_target(namespace, name),
        "DELETE",
        reference_path(namespace, name),
        timeout=timeout,
    )
    deleted = yield from request_unless_gone(call)
    return AlreadyGone() if deleted is GONE else Forgotten()


def prune_worktree(namespace: str, worktree: str) -> Flow[list[str]]:
    """Deletes the detached references of `worktree`, each preconditioned on the version the list showed,
    so a reference re-attached in between is kept; returns the names it deleted."""
    selector = {"fieldSelector": f"spec.worktree={worktree},spec.state=Detached"}
    listed = yield from request(
        Call(
            "List",
            f"sessionreferences of worktree {worktree}",
            "GET",
            references_path(namespace),
            query=selector,
        )
    )
    items = child(listed, "items")
    pruned: list[str] = []
    for item in items if isinstance(items, list) else []:
        metadata = child(item, "metadata")
        name = _text(child(metadata, "name"))
        if name is None:
            continue
        preconditions = {
            "uid": _text(child(metadata, "uid")) or "",
            "resourceVersion": _text(child(metadata, "resourceVersion")) or "",
        }
        call = Call(
            "Delete",
            reference_target(namespace, name),
            "DELETE",
            reference_path(namespace, name),
            body={"preconditions": preconditions},
        )
        try:
            deleted = yield from request_unless_gone(call)
        except KubeRequestError as error:
            # Changed since the list (re-attached, or replaced): no longer the tombstone this prune was asked for.
            if error.status != 409:
                raise
            continue
        if deleted is not GONE:
            pruned.append(name)
    return pruned
