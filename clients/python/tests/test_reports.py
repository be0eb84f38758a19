"""record_turn and report_once through both shells against a scripted API server."""

import pytest

from sandbox_operator_client import (
    AlreadyReported,
    KubeRequestError,
    NotReported,
    Reported,
    ReportRequest,
    TurnRecord,
    reported_annotation,
)
from scripted import Script, Step, answer
from shells import Shell

REQUEST = ReportRequest(
    namespace="ns",
    reference="child-ref",
    child_session="child",
    delegation_id="op-1",
    delegation="Answered",
    turn_id="t2",
)
ANNOTATION = reported_annotation("op-1")
RESUMED = {
    "metadata": {"resourceVersion": "9"},
    "status": {"turn": {"id": "t2", "phase": "Completed", "origin": "ParentMessage"}},
}


def test_report_once_delivers_then_spends_the_key(shell_kind: str) -> None:
    script = Script(
        [
            Step("GET", "/sessionreferences/child-ref", answer(200, RESUMED)),
            Step("PATCH", "/sessionreferences/child-ref", answer(200, {})),
        ]
    )
    delivered: list[Reported] = []
    outcome = Shell(shell_kind, script).reports("report_once", REQUEST, deliver=delivered.append)
    script.done()
    assert outcome == delivered[0]
    assert isinstance(outcome, Reported)
    assert (outcome.report.reason, outcome.report.key) == ("Resumption", "resume:op-1:t2:answer")
    escaped = ANNOTATION.replace("/", "~1")
    assert script.calls[1].content_type == "application/json-patch+json"
    assert script.calls[1].body == [
        {"op": "test", "path": "/metadata/resourceVersion", "value": "9"},
        {"op": "add", "path": "/metadata/annotations", "value": {}},
        {"op": "add", "path": f"/metadata/annotations/{escaped}", "value": "t2"},
    ]


def test_a_spent_key_is_not_delivered_again(shell_kind: str) -> None:
    spent = {**RESUMED, "metadata": {"resourceVersion": "10", "annotations": {ANNOTATION: "t2"}}}
    script = Script([Step("GET", "/sessionreferences/child-ref", answer(200, spent))])
    delivered: list[Reported] = []
    outcome = Shell(shell_kind, script).reports("report_once", REQUEST, deliver=delivered.append)
    assert (outcome, delivered) == (AlreadyReported("resume:op-1:t2:answer"), [])


def test_a_host_notice_turn_of_an_answered_delegation_is_not_reported(shell_kind: str) -> None:
    notice = {
        "status": {"turn": {"id": "t2", "phase": "Completed", "origin": "ShellNotice", "joinedOrigins": []}}
    }
    script = Script([Step("GET", "/sessionreferences/child-ref", answer(200, notice))])
    delivered: list[Reported] = []
    assert (
        Shell(shell_kind, script).reports("report_once", REQUEST, deliver=delivered.append) == NotReported()
    )
    assert delivered == []


def test_an_unreadable_reference_reports_without_spending(shell_kind: str) -> None:
    script = Script([Step("GET", "/sessionreferences/child-ref", answer(500, {"message": "etcd"}))])
    delivered: list[Reported] = []
    outcome = Shell(shell_kind, script).reports("report_once", REQUEST, deliver=delivered.append)
    script.done()
    assert isinstance(outcome, Reported)
    assert outcome.report.reason == "ProjectionUnreadable"
    assert delivered == [outcome]


def test_a_failed_delivery_spends_nothing(shell_kind: str) -> None:
    script = Script([Step("GET", "/sessionreferences/child-ref", answer(200, RESUMED))])

    def refuse(report: Reported) -> None:
        raise RuntimeError("the parent's inbox is down")

    with pytest.raises(RuntimeError, match="inbox is down"):
        Shell(shell_kind, script).reports("report_once", REQUEST, deliver=refuse)
    script.done()


def test_a_spend_that_lost_to_a_racing_spender_of_the_same_turn_stops(shell_kind: str) -> None:
    raced = {**RESUMED, "metadata": {"resourceVersion": "11", "annotations": {ANNOTATION: "t2"}}}
    script = Script(
        [
            Step("GET", "/sessionreferences/child-ref", answer(200, RESUMED)),
            Step("PATCH", "/sessionreferences/child-ref", answer(422, {"message": "test failed"})),
            Step("GET", "/sessionreferences/child-ref", answer(200, raced)),
        ]
    )
    outcome = Shell(shell_kind, script).reports("report_once", REQUEST, deliver=lambda report: None)
    script.done()
    assert isinstance(outcome, Reported)


def test_record_turn_writes_the_turn_and_retries_a_conflict(shell_kind: str) -> None:
    stored = {
        "metadata": {"resourceVersion": "3"},
        "status": {"endedTurns": [{"id": "t0", "phase": "Failed"}]},
    }
    script = Script(
        [
            Step("GET", "/sessionreferences/child-ref", answer(200, stored)),
            Step("PATCH", "/sessionreferences/child-ref/status", answer(409, {"message": "conflict"})),
            Step("GET", "/sessionreferences/child-ref", answer(200, stored)),
            Step("PATCH", "/sessionreferences/child-ref/status", answer(200, {})),
        ]
    )
    turn = TurnRecord(id="t1", phase="Completed", origin="ShellNotice", joined_origins=["PersonMessage"] * 40)
    Shell(shell_kind, script).reports("record_turn", "ns", "child-ref", turn)
    script.done()
    status = script.calls[3].body["status"]  # type: ignore[index]
    assert status["turn"]["joinedOrigins"] == ["PersonMessage"]
    assert status["endedTurns"] == [{"id": "t0", "phase": "Failed"}, {"id": "t1", "phase": "Completed"}]
    assert script.calls[3].body["metadata"] == {"resourceVersion": "3"}  # type: ignore[index]


def test_record_turn_gives_up_after_five_conflicts(shell_kind: str) -> None:
    steps = []
    for _ in range(5):
        steps += [
            Step("GET", "/sessionreferences/child-ref", answer(200, {"metadata": {"resourceVersion": "3"}})),
            Step("PATCH", "/sessionreferences/child-ref/status", answer(409, {"message": "conflict"})),
        ]
    script = Script(steps)
    turn = TurnRecord(id="t1", phase="Running", origin="PersonMessage")
    with pytest.raises(KubeRequestError) as failed:
        Shell(shell_kind, script).reports("record_turn", "ns", "child-ref", turn)
    script.done()
    assert (failed.value.step, failed.value.status) == ("PatchStatus", 409)
