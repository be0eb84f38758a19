"""attach to a suspended sandbox through both shells against a scripted API server: a sandbox its spec
suspends is resumed by a JSON Patch testing the version read (a 403 is SandboxResumeForbiddenError); an idle
one is resumed by the attach itself; wait_ready returns once Ready, or raises SandboxNotReadyError."""

import pytest

from sandbox_operator_client import (
    AttachRequest,
    SandboxNotReadyError,
    SandboxResumeForbiddenError,
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
SUSPENDED = answer(
    200, {"metadata": {"name": "sbx", "resourceVersion": "42"}, "spec": {"operatingMode": "Suspended"}}
)
IDLE = answer(
    200,
    {
        "metadata": {"name": "sbx", "generation": 1},
        "spec": {"operatingMode": "Running"},
        "status": {"phase": "Suspended", "conditions": [{"type": "Suspended", "status": "True"}]},
    },
)


def ready(generation: int, status: str, reason: str) -> Reply:
    return answer(
        200,
        {
            "metadata": {"name": "sbx", "generation": generation},
            "status": {
                "phase": "Running" if status == "True" else "Suspended",
                "conditions": [
                    {"type": "Ready", "status": status, "reason": reason, "observedGeneration": generation}
                ],
            },
        },
    )


def test_a_sandbox_its_spec_suspends_is_resumed_on_the_version_read(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/sessionreferences", CREATED),
            Step("GET", "/sandboxes/sbx", SUSPENDED),
            Step("PATCH", "/sandboxes/sbx", answer(200, {})),
        ]
    )
    assert Shell(shell_kind, script).references("attach", REQUEST) == NAME
    script.done()
    patch = script.calls[2]
    assert patch.content_type == "application/json-patch+json"
    assert patch.body == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "42"},
        {"op": "replace", "path": "/spec/operatingMode", "value": "Running"},
    ]


def test_a_changed_sandbox_is_read_again_and_judged_again(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/sessionreferences", CREATED),
            Step("GET", "/sandboxes/sbx", SUSPENDED),
            Step("PATCH", "/sandboxes/sbx", answer(422, {"message": "the test failed"})),
            Step("GET", "/sandboxes/sbx", IDLE),
        ]
    )
    Shell(shell_kind, script).references("attach", REQUEST)
    script.done()


def test_an_identity_that_may_not_resume_gets_a_typed_error(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/sessionreferences", CREATED),
            Step("GET", "/sandboxes/sbx", SUSPENDED),
            Step("PATCH", "/sandboxes/sbx", answer(403, {"message": "forbidden"})),
        ]
    )
    with pytest.raises(SandboxResumeForbiddenError) as refused:
        Shell(shell_kind, script).references("attach", REQUEST)
    script.done()
    assert refused.value.kind == "SandboxResumeForbidden"
    assert "spec.operatingMode: Running" in str(refused.value)


def test_resume_false_and_an_idle_sandbox_write_nothing(shell_kind: str) -> None:
    for sandbox, options in ((SUSPENDED, {"resume": False}), (IDLE, {})):
        script = Script([Step("POST", "/sessionreferences", CREATED), Step("GET", "/sandboxes/sbx", sandbox)])
        Shell(shell_kind, script).references("attach", REQUEST, **options)
        script.done()


def test_wait_ready_returns_once_ready_for_the_current_generation(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/sessionreferences", CREATED),
            Step("GET", "/sandboxes/sbx", IDLE),
            Step("GET", "/sandboxes/sbx", ready(1, "False", "Suspended")),
            Step("GET", "/sandboxes/sbx", ready(1, "True", "PodsReady")),
        ]
    )
    Shell(shell_kind, script).references("attach", REQUEST, wait_ready=5.0, poll=0.01)
    script.done()


def test_wait_ready_raises_at_its_deadline_and_when_the_sandbox_goes(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/sessionreferences", CREATED),
            Step("GET", "/sandboxes/sbx", IDLE),
            *[Step("GET", "/sandboxes/sbx", ready(1, "False", "Suspended")) for _ in range(100)],
        ]
    )
    with pytest.raises(SandboxNotReadyError) as late:
        Shell(shell_kind, script).references("attach", REQUEST, wait_ready=0.05, poll=0.01)
    assert (late.value.reason, late.value.seen) == ("Deadline", "phase Suspended, Ready Suspended")
    gone = Script(
        [
            Step("POST", "/sessionreferences", CREATED),
            Step("GET", "/sandboxes/sbx", IDLE),
            Step("GET", "/sandboxes/sbx", answer(404, {})),
        ]
    )
    with pytest.raises(SandboxNotReadyError) as missing:
        Shell(shell_kind, gone).references("attach", REQUEST, wait_ready=5.0, poll=0.01)
    gone.done()
    assert missing.value.reason == "Gone"
