"""The drain notice on a session's reference (status.disruption, written by the operator while a drain moves
the sandbox's pods), read through both shells against a scripted API server, and by the pure reader."""

from sandbox_operator_client import DisruptionNotice, read_disruption, session_reference_name
from scripted import Script, Step, answer
from shells import Shell

NAME = session_reference_name("sbx", "workspace_1")
SINCE, MOVES_BY = "2026-12-03T07:00:00Z", "2026-12-03T07:05:00Z"
NOTICE: dict[str, object] = {"nodes": ["node-a"], "since": SINCE, "movesBy": MOVES_BY}


def test_the_notice_is_read_from_the_sessions_reference(shell_kind: str) -> None:
    body = {
        "metadata": {"name": NAME},
        "status": {"turn": {"id": "t-1", "phase": "Running"}, "disruption": NOTICE},
    }
    script = Script([Step("GET", f"/sessionreferences/{NAME}", answer(200, body))])
    notice = Shell(shell_kind, script).references("disruption", "ns", "sbx", "workspace_1")
    script.done()
    assert notice == DisruptionNotice(("node-a",), "2026-12-03T07:00:00Z", "2026-12-03T07:05:00Z")


def test_no_notice_and_a_gone_reference_are_none(shell_kind: str) -> None:
    for reply in (
        answer(200, {"metadata": {"name": NAME}, "status": {}}),
        answer(404, {"reason": "NotFound"}),
    ):
        script = Script([Step("GET", f"/sessionreferences/{NAME}", reply)])
        assert Shell(shell_kind, script).references("disruption", "ns", "sbx", "workspace_1") is None
        script.done()


def test_a_notice_this_version_cannot_read_is_none() -> None:
    for notice in (
        {**NOTICE, "nodes": []},
        {**NOTICE, "nodes": "node-a"},
        {**NOTICE, "nodes": ["node-a", 7]},
        {k: v for k, v in NOTICE.items() if k != "since"},
        {**NOTICE, "movesBy": 5},
        "draining",
    ):
        assert read_disruption({"status": {"disruption": notice}}) is None, notice
    assert read_disruption(None) is None
    assert read_disruption({"status": {"disruption": {**NOTICE, "nodes": ["a", "b"]}}}) == DisruptionNotice(
        ("a", "b"), SINCE, MOVES_BY
    )
