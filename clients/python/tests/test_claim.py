"""claim() through both shells against a scripted API server: it creates the SandboxClaim (spec in the API's
names), watches that one claim from the version the create answered and returns on the event that makes it
bound and Ready, reading nothing; a watch that ends is opened again from the last version seen, one that
expires (410) is replaced by a read and a watch from the version read; a deadline, a refusal or a deleted
claim raises saying what the conditions said; a request naming both a pool and a template, or neither, is
refused before anything is written."""

import time

import pytest

from sandbox_operator_client import (
    ClaimRequest,
    ClaimResult,
    KubeRequestError,
    SandboxClaimNotReadyError,
    SandboxClaims,
)
from sandbox_operator_client._protocol import Reply
from scripted import Script, Step, SyncScripted, Watched, answer, event
from shells import Shell

REQUEST = ClaimRequest(
    namespace="ns", session="workspace_1", route="r/1", role="Root", warm_pool="python-pool", worktree="wt-1"
)
CREATED = answer(201, {"metadata": {"name": "claim-x7k2q", "resourceVersion": "10"}})
WAITING_STATUS = {
    "conditions": [
        {"type": "Bound", "status": "False", "reason": "Binding", "message": "binding"},
        {"type": "Ready", "status": "False", "reason": "NotBound"},
    ]
}


def claim(version: str, status: object = None) -> dict[str, object]:
    body: dict[str, object] = {"metadata": {"name": "claim-x7k2q", "resourceVersion": version}}
    if status is not None:
        body["status"] = status
    return body


def bound_status(launch: str) -> dict[str, object]:
    return {
        "sandbox": "python-pool-abcde",
        "reference": "python-pool-abcde-0123456789abcdef",
        "launchType": launch,
        "conditions": [{"type": "Ready", "status": "True", "reason": "SandboxReady"}],
    }


def bound(launch: str, version: str = "12") -> str:
    return event("MODIFIED", claim(version, bound_status(launch)))


WAITING = event("MODIFIED", claim("11", WAITING_STATUS))
RESULT = ClaimResult("claim-x7k2q", "python-pool-abcde", "python-pool-abcde-0123456789abcdef", "Warm")


def test_claim_creates_the_claim_and_returns_on_the_watch_event_that_makes_it_ready(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/namespaces/ns/sandboxclaims", CREATED),
            Watched("/namespaces/ns/sandboxclaims", [WAITING, bound("Warm")], hang=True),
        ]
    )
    result = Shell(shell_kind, script).claims("claim", REQUEST, deadline=5.0)
    assert result == RESULT
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
    # One watch of this claim alone, from the version the create answered; no read.
    watch = script.calls[1]
    assert (watch.step, watch.method, watch.path) == (
        "Watch",
        "GET",
        "/apis/sandbox.agents.dev/v1alpha1/namespaces/ns/sandboxclaims",
    )
    assert watch.query == {
        "watch": "true",
        "fieldSelector": "metadata.name=claim-x7k2q",
        "resourceVersion": "10",
        "allowWatchBookmarks": "true",
        "timeoutSeconds": "5",
    }
    assert watch.timeout is not None and 4.0 < watch.timeout <= 5.0
    assert len(script.calls) == 2
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
            Step(
                "POST",
                "/namespaces/ns/sandboxclaims",
                answer(201, {"metadata": {"name": "mine", "resourceVersion": "3"}}),
            ),
            Watched("/sandboxclaims", [bound("Cold")]),
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
    assert script.calls[1].query is not None
    assert script.calls[1].query["fieldSelector"] == "metadata.name=mine"


def test_an_ended_watch_is_opened_again_from_the_last_version_and_an_expired_one_reads_first(
    shell_kind: str,
) -> None:
    expired = event("ERROR", {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"})
    script = Script(
        [
            Step("POST", "/sandboxclaims", CREATED),
            Watched("/sandboxclaims", [event("BOOKMARK", {"metadata": {"resourceVersion": "20"}})]),
            Watched("/sandboxclaims", [event("MODIFIED", claim("25", WAITING_STATUS))], Reply(None)),
            Watched("/sandboxclaims", [expired]),
            Step("GET", "/sandboxclaims/claim-x7k2q", answer(200, claim("90", WAITING_STATUS))),
            Watched("/sandboxclaims", [bound("Warm", "91")], hang=True),
        ]
    )
    assert Shell(shell_kind, script).claims("claim", REQUEST, deadline=5.0) == RESULT
    versions = [c.query["resourceVersion"] for c in script.calls if c.query is not None]
    assert versions == ["10", "20", "25", "90"]
    script.done()


def test_the_deadline_raises_saying_what_the_conditions_said(shell_kind: str) -> None:
    script = Script(
        [Step("POST", "/sandboxclaims", CREATED), Watched("/sandboxclaims", [WAITING], hang=True)]
    )
    started = time.monotonic()
    with pytest.raises(SandboxClaimNotReadyError) as raised:
        Shell(shell_kind, script).claims("claim", REQUEST, deadline=0.2, poll=0.01)
    assert 0.2 <= time.monotonic() - started < 1.0
    assert raised.value.reason == "Deadline"
    assert raised.value.claim == "claim-x7k2q"
    assert raised.value.seen == "Bound False Binding: binding; Ready False NotBound"
    assert "within 0.2 s (last seen: Bound False Binding: binding; Ready False NotBound)" in str(raised.value)
    assert raised.value.__cause__ is None
    assert script.calls[1].query is not None and script.calls[1].query["timeoutSeconds"] == "1"


def test_a_deadline_after_failing_watches_chains_the_last_failure(shell_kind: str) -> None:
    lost = ConnectionResetError("reset by peer")
    script = Script(
        [Step("POST", "/sandboxclaims", CREATED)]
        + [Watched("/sandboxclaims", [], Reply(None, error=lost)) for _ in range(6)]
    )
    with pytest.raises(SandboxClaimNotReadyError) as raised:
        Shell(shell_kind, script).claims("claim", REQUEST, deadline=0.3)
    assert raised.value.reason == "Deadline"
    assert raised.value.__cause__ is lost
    # Pauses of 0, 100 and 200 ms between the watches: three or four in 300 ms, not a busy loop.
    assert 3 <= len(script.calls) - 1 <= 4


def test_a_refused_watch_raises_at_once(shell_kind: str) -> None:
    forbidden = answer(403, {"kind": "Status", "code": 403, "message": "cannot watch sandboxclaims"})
    script = Script([Step("POST", "/sandboxclaims", CREATED), Watched("/sandboxclaims", [], forbidden)])
    with pytest.raises(KubeRequestError) as raised:
        Shell(shell_kind, script).claims("claim", REQUEST)
    assert (raised.value.step, raised.value.status) == ("Watch", 403)
    assert raised.value.target == "sandboxclaim ns/claim-x7k2q"
    assert "cannot watch sandboxclaims" in str(raised.value)


def test_a_claim_deleted_while_watched_raises(shell_kind: str) -> None:
    script = Script(
        [
            Step("POST", "/sandboxclaims", CREATED),
            Watched("/sandboxclaims", [WAITING, event("DELETED", claim("12", WAITING_STATUS))], hang=True),
        ]
    )
    with pytest.raises(SandboxClaimNotReadyError) as raised:
        Shell(shell_kind, script).claims("claim", REQUEST)
    assert raised.value.reason == "Gone"


def test_waiting_on_a_claim_reads_it_first_and_a_gone_one_raises(shell_kind: str) -> None:
    script = Script(
        [
            Step("GET", "/sandboxclaims/claim-x7k2q", answer(200, claim("40", WAITING_STATUS))),
            Watched("/sandboxclaims", [bound("Warm", "41")]),
            Step("GET", "/sandboxclaims/claim-x7k2q", answer(404, {"message": "not found"})),
        ]
    )
    shell = Shell(shell_kind, script)
    assert shell.claims("wait_until_ready", "ns", "claim-x7k2q") == RESULT
    assert script.calls[1].query is not None and script.calls[1].query["resourceVersion"] == "40"
    with pytest.raises(SandboxClaimNotReadyError) as raised:
        shell.claims("wait_until_ready", "ns", "claim-x7k2q")
    assert raised.value.reason == "Gone"


def test_a_transport_that_cannot_watch_is_refused() -> None:
    class RequestsOnly:
        def send(self, call: object) -> Reply:
            return Reply(None)

    with pytest.raises(TypeError, match="must watch too"):
        SandboxClaims(transport=RequestsOnly())  # type: ignore[arg-type]
    assert callable(SandboxClaims(transport=SyncScripted(Script([]))).claim)


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
