"""claim() through both shells against a scripted API server: it creates the SandboxClaim (spec in the API's
names), reads it until bound and Ready and returns the binding; a deadline or a deleted claim raises
SandboxClaimNotReadyError saying what the conditions said; a request naming both a pool and a template, or
neither, is refused before anything is written."""

import pytest

from sandbox_operator_client import ClaimRequest, ClaimResult, SandboxClaimNotReadyError
from sandbox_operator_client._protocol import Reply
from scripted import Script, Step, answer
from shells import Shell

REQUEST = ClaimRequest(
    namespace="ns", session="workspace_1", route="r/1", role="Root", warm_pool="python-pool", worktree="wt-1"
)
CREATED = answer(201, {"metadata": {"name": "claim-x7k2q"}})
WAITING = answer(
    200,
    {
        "status": {
            "conditions": [
                {"type": "Bound", "status": "False", "reason": "Binding", "message": "binding"},
                {"type": "Ready", "status": "False", "reason": "NotBound"},
            ]
        }
    },
)


def bound(launch: str) -> Reply:
    return answer(
        200,
        {
            "status": {
                "sandbox": "python-pool-abcde",
                "reference": "python-pool-abcde-0123456789abcdef",
                "launchType": launch,
                "conditions": [{"type": "Ready", "status": "True", "reason": "SandboxReady"}],
            }
        },
    )


def test_claim_creates_the_claim_and_returns_the_binding_once_ready(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/namespaces/ns/sandboxclaims", CREATED),
            Step("GET", "/sandboxclaims/claim-x7k2q", WAITING),
            Step("GET", "/sandboxclaims/claim-x7k2q", bound("Warm")),
        ]
    )
    result = Shell(shell_kind, script).claims("claim", REQUEST, deadline=5.0)
    assert result == ClaimResult(
        "claim-x7k2q", "python-pool-abcde", "python-pool-abcde-0123456789abcdef", "Warm"
    )
    assert script.calls[0].body == {
        "apiVersion": "sandbox.agents.dev/v1alpha1",
        "kind": "SandboxClaim",
        "metadata": {"generateName": "claim-", "namespace": "ns"},
        "spec": {
            "session": "workspace_1",
            "route": "r/1",
            "role": "Root",
            "warmPoolRef": {"name": "python-pool"},
            "worktree": "wt-1",
        },
    }
    script.done()


def test_a_named_cold_claim_names_its_template(shell_kind: str) -> None:
    request = ClaimRequest(
        namespace="ns",
        name="mine",
        session="s",
        route="r",
        role="Subagent",
        parent_session="p",
        template="python-agent",
    )
    script = Script(
        [
            Step("POST", "/namespaces/ns/sandboxclaims", answer(201, {"metadata": {"name": "mine"}})),
            Step("GET", "/sandboxclaims/mine", bound("Cold")),
        ]
    )
    result = Shell(shell_kind, script).claims("claim", request)
    assert result.launch_type == "Cold"
    body = script.calls[0].body
    assert isinstance(body, dict)
    assert body["metadata"] == {"name": "mine", "namespace": "ns"}
    assert body["spec"] == {
        "session": "s",
        "route": "r",
        "role": "Subagent",
        "templateRef": {"name": "python-agent"},
        "parentSession": "p",
    }


def test_the_deadline_raises_saying_what_the_conditions_said(shell_kind: str) -> None:
    script = Script([Step("POST", "/sandboxclaims", CREATED)] + [Step("GET", "/claim-x7k2q", WAITING)] * 50)
    with pytest.raises(SandboxClaimNotReadyError) as raised:
        Shell(shell_kind, script).claims("claim", REQUEST, deadline=0.05, poll=0.01)
    assert raised.value.reason == "Deadline"
    assert raised.value.claim == "claim-x7k2q"
    assert "Bound False Binding: binding" in str(raised.value)


def test_a_claim_deleted_while_waiting_raises(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/sandboxclaims", CREATED),
            Step("GET", "/claim-x7k2q", answer(404, {"message": "not found"})),
        ]
    )
    with pytest.raises(SandboxClaimNotReadyError) as raised:
        Shell(shell_kind, script).claims("claim", REQUEST)
    assert raised.value.reason == "Gone"


def test_a_claim_names_exactly_one_of_pool_and_template(shell_kind: str) -> None:
    script = Script([])
    both = ClaimRequest(namespace="ns", session="s", route="r", role="Root", warm_pool="p", template="t")
    with pytest.raises(ValueError, match="exactly one of warm_pool"):
        Shell(shell_kind, script).claims("claim", both)
    assert script.calls == []


def test_release_deletes_the_claim(shell_kind: str) -> None:
    script = Script(
        [
            Step("DELETE", "/sandboxclaims/claim-x7k2q", answer(200, {})),
            Step("DELETE", "/sandboxclaims/claim-x7k2q", answer(404, {})),
        ]
    )
    assert Shell(shell_kind, script).claims("release", "ns", "claim-x7k2q") == "Released"
    assert Shell(shell_kind, script).claims("release", "ns", "claim-x7k2q") == "AlreadyGone"
