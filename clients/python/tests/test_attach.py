"""attach through both shells against a scripted API server: write, then read the Sandbox live; a refused
attach withdraws exactly what it wrote; failures are typed, with their cause."""

import json

import pytest

from sandbox_operator_client import (
    ApiAnswerError,
    AttachRequest,
    KubeRequestError,
    SandboxDeletingError,
    SessionReferenceConflictError,
    session_reference_name,
)
from sandbox_operator_client._protocol import Reply
from scripted import Script, Step, answer
from shells import Shell

REQUEST = AttachRequest(
    namespace="ns", sandbox="sbx", session="workspace_1", worktree="wt-1", route="r/new", role="Root"
)
NAME = session_reference_name("sbx", "workspace_1")
CREATED = answer(201, {"metadata": {"name": NAME, "uid": "u-1", "resourceVersion": "7"}})
LIVE = answer(200, {"metadata": {"name": "sbx"}, "status": {"phase": "Running"}})
DELETING = answer(200, {"metadata": {"name": "sbx", "deletionTimestamp": "2026-12-02T07:00:00Z"}})
FIXED = {"sandbox": "sbx", "session": "workspace_1", "worktree": "wt-1", "role": "Root"}
TOMBSTONE = answer(
    200, {"metadata": {"resourceVersion": "5"}, "spec": {**FIXED, "state": "Detached", "route": "r/old"}}
)


def test_attach_creates_then_reads_the_sandbox(shell_kind: str) -> None:
    script = Script([Step("POST", "/sessionreferences", CREATED), Step("GET", "/sandboxes/sbx", LIVE)])
    assert Shell(shell_kind, script).references("attach", REQUEST) == NAME
    script.done()
    assert script.calls[0].body == {
        "apiVersion": "sandbox.agents.dev/v1alpha1",
        "kind": "SessionReference",
        "metadata": {"name": NAME, "namespace": "ns"},
        "spec": {
            "sandbox": "sbx",
            "session": "workspace_1",
            "worktree": "wt-1",
            "route": "r/new",
            "role": "Root",
            "state": "Attached",
        },
    }


def test_a_subagent_names_its_parent() -> None:
    script = Script([Step("POST", "/sessionreferences", CREATED), Step("GET", "/sandboxes/sbx", LIVE)])
    subagent = AttachRequest(
        namespace="ns",
        sandbox="sbx",
        session="workspace_2",
        route="r",
        role="Subagent",
        parent_session="workspace_1",
    )
    Shell("sync", script).references("attach", subagent)
    spec = script.calls[0].body["spec"]  # type: ignore[index]
    assert spec["parentSession"] == "workspace_1"
    assert "worktree" not in spec


def test_a_refused_first_attach_deletes_what_it_created(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/sessionreferences", CREATED),
            Step("GET", "/sandboxes/sbx", DELETING),
            Step("DELETE", f"/sessionreferences/{NAME}", answer(200, {})),
        ]
    )
    with pytest.raises(SandboxDeletingError) as refused:
        Shell(shell_kind, script).references("attach", REQUEST)
    script.done()
    assert (refused.value.reason, refused.value.since, refused.value.withdrawal) == (
        "Deleting",
        "2026-12-02T07:00:00Z",
        "Deleted",
    )
    assert script.calls[2].body == {"preconditions": {"uid": "u-1", "resourceVersion": "7"}}
    assert "is being deleted (since 2026-12-02T07:00:00Z)" in str(refused.value)


def test_a_refused_reattach_restores_the_tombstone(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/sessionreferences", answer(409, {"message": "exists"})),
            Step("GET", f"/sessionreferences/{NAME}", TOMBSTONE),
            Step("PATCH", f"/sessionreferences/{NAME}", answer(200, {"metadata": {"resourceVersion": "6"}})),
            Step("GET", "/sandboxes/sbx", answer(404, {"message": "not found"})),
            Step("PATCH", f"/sessionreferences/{NAME}", answer(200, {})),
        ]
    )
    with pytest.raises(SandboxDeletingError) as refused:
        Shell(shell_kind, script).references("attach", REQUEST)
    script.done()
    assert (refused.value.reason, refused.value.since, refused.value.withdrawal) == ("Gone", None, "Restored")
    assert script.calls[2].body == {
        "metadata": {"resourceVersion": "5"},
        "spec": {"state": "Attached", "route": "r/new"},
    }
    assert script.calls[2].content_type == "application/merge-patch+json"
    assert script.calls[4].body == {
        "metadata": {"resourceVersion": "6"},
        "spec": {"state": "Detached", "route": "r/old"},
    }


def test_a_squatted_name_is_refused_naming_the_field_and_nothing_is_written(shell_kind: str) -> None:
    squat = {**FIXED, "worktree": "wt-own", "state": "Detached", "route": "r/squat"}
    script = Script(
        [
            Step("POST", "/sessionreferences", answer(409, {"message": "exists"})),
            Step(
                "GET",
                f"/sessionreferences/{NAME}",
                answer(200, {"metadata": {"resourceVersion": "5"}, "spec": squat}),
            ),
        ]
    )
    with pytest.raises(SessionReferenceConflictError) as refused:
        Shell(shell_kind, script).references("attach", REQUEST)
    script.done()
    error = refused.value
    assert (error.kind, error.reference, error.field, error.requested, error.found) == (
        "SessionReferenceConflict",
        NAME,
        "worktree",
        "wt-1",
        "wt-own",
    )
    assert f'sessionreference ns/{NAME} already exists with spec.worktree "wt-own", not "wt-1"' in str(error)


def test_a_reattach_retries_a_conflict_on_fresh_state(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/sessionreferences", answer(409)),
            Step("GET", f"/sessionreferences/{NAME}", TOMBSTONE),
            Step("PATCH", f"/sessionreferences/{NAME}", answer(409, {"message": "changed"})),
            Step("GET", f"/sessionreferences/{NAME}", TOMBSTONE),
            Step("PATCH", f"/sessionreferences/{NAME}", answer(200, {"metadata": {"resourceVersion": "8"}})),
            Step("GET", "/sandboxes/sbx", LIVE),
        ]
    )
    assert Shell(shell_kind, script).references("attach", REQUEST) == NAME
    script.done()


def test_a_withdrawal_that_meets_another_writer_leaves_their_reference(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/sessionreferences", CREATED),
            Step("GET", "/sandboxes/sbx", DELETING),
            Step("DELETE", f"/sessionreferences/{NAME}", answer(409, {"message": "precondition"})),
        ]
    )
    with pytest.raises(SandboxDeletingError) as refused:
        Shell(shell_kind, script).references("attach", REQUEST)
    assert refused.value.withdrawal == "LeftChanged"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"<html>proxy error</html>", "the answer is not JSON"),
        (json.dumps({"metadata": {"annotations": ["x"]}}).encode(), "metadata.annotations is not a map"),
    ],
)
def test_a_sandbox_it_cannot_read_is_treated_as_deleting(shell_kind: str, body: bytes, problem: str) -> None:
    script = Script(
        [
            Step("POST", "/sessionreferences", CREATED),
            Step("GET", "/sandboxes/sbx", Reply(200, body)),
            Step("DELETE", f"/sessionreferences/{NAME}", answer(200, {})),
        ]
    )
    with pytest.raises(SandboxDeletingError) as refused:
        Shell(shell_kind, script).references("attach", REQUEST)
    script.done()
    assert (refused.value.reason, refused.value.problem, refused.value.withdrawal) == (
        "Unreadable",
        problem,
        "Deleted",
    )


def test_a_failed_request_is_typed_with_step_target_status_and_cause(shell_kind: str) -> None:
    script = Script(
        [Step("POST", "/sessionreferences", answer(422, {"message": 'spec.role: Unsupported value: "King"'}))]
    )
    with pytest.raises(KubeRequestError) as failed:
        Shell(shell_kind, script).references("attach", REQUEST)
    error = failed.value
    assert (error.step, error.target, error.status) == ("Create", f"sessionreference ns/{NAME}", 422)
    assert isinstance(error.__cause__, ApiAnswerError)
    assert (
        str(error)
        == f'Create sessionreference ns/{NAME} failed with HTTP 422: spec.role: Unsupported value: "King"'
    )


def test_no_answer_at_all_is_a_request_error_without_status(shell_kind: str) -> None:
    refused = ConnectionRefusedError("connection refused")
    script = Script(
        [
            Step("POST", "/sessionreferences", CREATED),
            Step("GET", "/sandboxes/sbx", Reply(None, error=refused)),
        ]
    )
    with pytest.raises(KubeRequestError) as failed:
        Shell(shell_kind, script).references("attach", REQUEST)
    assert (failed.value.step, failed.value.status, failed.value.__cause__) == ("Get", None, refused)


def test_a_cause_without_a_message_is_named_by_its_type(shell_kind: str) -> None:
    script = Script([Step("POST", "/sessionreferences", Reply(None, error=TimeoutError()))])
    with pytest.raises(KubeRequestError) as failed:
        Shell(shell_kind, script).references("attach", REQUEST)
    assert str(failed.value) == f"Create sessionreference ns/{NAME} failed: TimeoutError"
