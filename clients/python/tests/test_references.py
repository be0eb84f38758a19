"""detach, forget and prune_worktree through both shells against a scripted API server."""

import asyncio
import re
import time

import pytest

from sandbox_operator_client import (
    AlreadyGone,
    AsyncSessionReferences,
    ForgetDeadlineError,
    ForgetFailed,
    Forgotten,
    KubeRequestError,
    SessionReferences,
    session_reference_name,
)
from sandbox_operator_client._protocol import Reply
from scripted import AsyncUnanswered, Script, Step, Unanswered, answer
from shells import Shell

NAME = session_reference_name("sbx", "workspace_1")


def test_detach_marks_a_tombstone_and_records_when(shell_kind: str) -> None:
    script = Script(
        [
            Step("PATCH", f"/sessionreferences/{NAME}", answer(200, {})),
            Step("PATCH", f"/sessionreferences/{NAME}/status", answer(200, {})),
        ]
    )
    Shell(shell_kind, script).references("detach", "ns", "sbx", "workspace_1")
    script.done()
    assert script.calls[0].body == {"spec": {"state": "Detached"}}
    detached = script.calls[1].body["status"]["detachedAt"]  # type: ignore[index]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", detached)


def test_detach_of_a_missing_reference_is_a_404(shell_kind: str) -> None:
    script = Script([Step("PATCH", f"/sessionreferences/{NAME}", answer(404, {"message": "not found"}))])
    with pytest.raises(KubeRequestError) as failed:
        Shell(shell_kind, script).references("detach", "ns", "sbx", "workspace_1")
    assert failed.value.not_found


@pytest.mark.parametrize(
    ("reply", "expected"),
    [(answer(200, {}), Forgotten()), (answer(404, {"message": "gone"}), AlreadyGone())],
)
def test_forget(shell_kind: str, reply: Reply, expected: object) -> None:
    script = Script([Step("DELETE", f"/sessionreferences/{NAME}", reply)])
    assert Shell(shell_kind, script).references("forget", "ns", "sbx", "workspace_1") == expected


@pytest.mark.parametrize(
    "reply", [answer(403, {"message": "forbidden"}), Reply(None, error=OSError("reset"))]
)
def test_forget_reports_a_failure_as_a_value(shell_kind: str, reply: Reply) -> None:
    script = Script([Step("DELETE", f"/sessionreferences/{NAME}", reply)])
    result = Shell(shell_kind, script).references("forget", "ns", "sbx", "workspace_1")
    assert isinstance(result, ForgetFailed)
    assert isinstance(result.error, KubeRequestError)
    assert result.error.step == "Delete"


def test_forget_past_its_deadline_returns_failed_in_time_blocking() -> None:
    server = Unanswered()
    started = time.monotonic()
    try:
        result = SessionReferences(transport=server).forget("ns", "sbx", "workspace_1", deadline=0.2)
    finally:
        server.released.set()
    assert time.monotonic() - started < 2
    assert isinstance(result, ForgetFailed)
    assert isinstance(result.error, ForgetDeadlineError)
    assert str(result.error) == "forget did not finish within 0.2 s"


def test_forget_past_its_deadline_cancels_its_request_asyncio() -> None:
    server = AsyncUnanswered()
    started = time.monotonic()
    result = asyncio.run(
        AsyncSessionReferences(transport=server).forget("ns", "sbx", "workspace_1", deadline=0.2)
    )
    assert time.monotonic() - started < 2
    assert isinstance(result, ForgetFailed)
    assert isinstance(result.error, ForgetDeadlineError)
    assert server.cancelled


def test_prune_deletes_listed_tombstones_and_keeps_what_changed(shell_kind: str) -> None:
    listed = {
        "items": [
            {"metadata": {"name": "a", "uid": "ua", "resourceVersion": "1"}},
            {"metadata": {"name": "b", "uid": "ub", "resourceVersion": "2"}},
            {"metadata": {"name": "c", "uid": "uc", "resourceVersion": "3"}},
        ]
    }
    script = Script(
        [
            Step("GET", "/sessionreferences", answer(200, listed)),
            Step("DELETE", "/sessionreferences/a", answer(200, {})),
            Step("DELETE", "/sessionreferences/b", answer(409, {"message": "precondition failed"})),
            Step("DELETE", "/sessionreferences/c", answer(404, {"message": "gone"})),
        ]
    )
    assert Shell(shell_kind, script).references("prune_worktree", "ns", "wt-1") == ["a"]
    script.done()
    assert script.calls[0].query == {"fieldSelector": "spec.worktree=wt-1,spec.state=Detached"}
    assert script.calls[2].body == {"preconditions": {"uid": "ub", "resourceVersion": "2"}}


def test_prune_fails_typed_on_other_errors(shell_kind: str) -> None:
    script = Script(
        [
            Step("GET", "/sessionreferences", answer(200, {"items": [{"metadata": {"name": "a"}}]})),
            Step("DELETE", "/sessionreferences/a", answer(500, {"message": "etcd"})),
        ]
    )
    with pytest.raises(KubeRequestError) as failed:
        Shell(shell_kind, script).references("prune_worktree", "ns", "wt-1")
    assert (failed.value.step, failed.value.status) == ("Delete", 500)
