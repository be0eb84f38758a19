"""The pure core against the shared vectors: the same names, byte for byte, and the same decisions as the
TypeScript client (test/unit/client/vectors.test.ts reads the same files)."""

from typing import Any

import pytest

from sandbox_operator_client import (
    AttachRequest,
    ReportRequest,
    TurnRecord,
    report_key,
    reported_annotation,
    session_reference_name,
)
from sandbox_operator_client._claim import judge_claim
from sandbox_operator_client._claim_watch import (
    UNSEEN_CLAIM,
    ClaimEvent,
    ClaimHeard,
    ClaimRead,
    WatchClosed,
    WatchExpired,
    WatchFailed,
    hear,
)
from sandbox_operator_client._fence import SandboxRead, judge_fence
from sandbox_operator_client._reattach import judge_reattach
from sandbox_operator_client._report import Deliver, decide_report, turn_status_patch
from sandbox_operator_client._resume import judge_readiness, judge_resume
from sandbox_operator_client._types import AlreadyReported, NotReported
from sandbox_operator_client._withdrawal import AttachWrite, Created, Reattached, plan_withdrawal
from vectors import cases, load

NAMES = load("names.json")


@pytest.mark.parametrize(
    "vector", NAMES["sessionReferenceName"], ids=lambda v: f"{v['sandbox']}/{v['session']}"
)
def test_session_reference_name(vector: dict[str, str]) -> None:
    assert session_reference_name(vector["sandbox"], vector["session"]) == vector["name"]


@pytest.mark.parametrize("vector", NAMES["reportedAnnotation"], ids=lambda v: repr(v["delegationId"]))
def test_reported_annotation(vector: dict[str, str]) -> None:
    assert reported_annotation(vector["delegationId"]) == vector["annotation"]


@pytest.mark.parametrize("vector", NAMES["reportKey"], ids=lambda v: v["key"])
def test_report_key(vector: dict[str, str]) -> None:
    assert report_key(vector["delegation"], vector["turnId"]) == vector["key"]


def _json(value: object) -> dict[str, Any]:
    """A decision as the vectors write it: its fields, None (not set) left out."""
    return {k: v for k, v in vars(value).items() if v is not None}


@pytest.mark.parametrize("vector", cases("fence.json"), ids=lambda v: v["case"])
def test_fence(vector: dict[str, Any]) -> None:
    read = vector["read"]
    assert _json(judge_fence(SandboxRead(read["kind"], read.get("body")))) == vector["judgement"]


def _written(raw: dict[str, Any]) -> AttachWrite:
    if raw["kind"] == "Created":
        return Created(raw["uid"], raw["resourceVersion"])
    before = raw["before"]
    return Reattached(before.get("state"), before.get("route"), raw["resourceVersion"])


@pytest.mark.parametrize("vector", cases("withdrawal.json"), ids=lambda v: v["case"])
def test_withdrawal(vector: dict[str, Any]) -> None:
    assert _json(plan_withdrawal(_written(vector["written"]), vector["route"])) == vector["plan"]


REATTACH = load("reattach.json")


@pytest.mark.parametrize("vector", REATTACH["cases"], ids=lambda v: v["case"])
def test_reattach(vector: dict[str, Any]) -> None:
    raw = {**REATTACH["requested"], **vector["requested"]}
    request = AttachRequest(
        namespace="ns",
        sandbox=raw["sandbox"],
        session=raw["session"],
        worktree=raw.get("worktree"),
        route="r",
        role=raw["role"],
        parent_session=raw.get("parentSession"),
    )
    judgement = judge_reattach(request, vector["stored"])
    as_json = (
        {"kind": "Same"}
        if judgement.kind == "Same"
        else {
            "kind": "Differs",
            "field": judgement.field,
            "requested": judgement.requested,
            "found": judgement.found,
        }
    )
    assert as_json == vector["judgement"]


def _outcome(decision: Deliver | AlreadyReported | NotReported) -> dict[str, Any]:
    if isinstance(decision, Deliver):
        report = decision.report
        return {
            "kind": "Deliver",
            "report": {"report": report.report, "reason": report.reason, "key": report.key},
        }
    if isinstance(decision, AlreadyReported):
        return {"kind": "AlreadyReported", "key": decision.key}
    return {"kind": "NotReported", "reason": decision.reason}


REPORT = load("report.json")


@pytest.mark.parametrize("vector", REPORT["cases"], ids=lambda v: v["case"])
def test_report_decision(vector: dict[str, Any]) -> None:
    raw = {**REPORT["request"], **vector["request"]}
    request = ReportRequest(
        namespace="ns",
        reference="child-ref",
        child_session=raw["childSession"],
        delegation_id=raw["delegationId"],
        delegation=raw["delegation"],
        turn_id=raw["turnId"],
    )
    assert _outcome(decide_report(request, vector["stored"])) == vector["outcome"]


ENDED = load("ended-turns.json")


@pytest.mark.parametrize("vector", ENDED["cases"], ids=lambda v: v["case"])
def test_turn_status_patch(vector: dict[str, Any]) -> None:
    raw = vector["turn"]
    turn = TurnRecord(
        id=raw["id"], phase=raw["phase"], origin=raw["origin"], joined_origins=raw["joinedOrigins"]
    )
    assert turn_status_patch(vector["stored"], turn, ENDED["now"]) == vector["patch"]


RESUME = load("resume.json")


@pytest.mark.parametrize("vector", RESUME["resume"], ids=lambda v: v["case"])
def test_resume(vector: dict[str, Any]) -> None:
    judgement = judge_resume(vector.get("body"))
    as_written: dict[str, Any] = {"kind": judgement.kind}
    if judgement.resource_version is not None:
        as_written["resourceVersion"] = judgement.resource_version
    assert as_written == vector["judgement"]


@pytest.mark.parametrize("vector", RESUME["readiness"], ids=lambda v: v["case"])
def test_readiness(vector: dict[str, Any]) -> None:
    assert _json(judge_readiness(vector.get("body"), gone=vector.get("gone", False))) == vector["judgement"]


@pytest.mark.parametrize("vector", cases("claim.json"), ids=lambda v: v["case"])
def test_claim_readiness(vector: dict[str, Any]) -> None:
    judged = judge_claim(vector.get("body"), gone="body" not in vector)
    expected = dict(vector["judgement"])
    if "launchType" in expected:
        expected["launch_type"] = expected.pop("launchType")
    assert _json(judged) == expected


def _heard(raw: dict[str, Any]) -> ClaimHeard:
    kind = raw["kind"]
    if kind == "Read":
        return ClaimRead(raw.get("body"), gone="body" not in raw)
    if kind == "Event":
        return ClaimEvent(raw["type"], raw["object"])
    if kind == "Closed":
        return WatchClosed()
    if kind == "Expired":
        return WatchExpired()
    assert kind == "Failed", kind
    return WatchFailed(raw["status"])


_CAMEL = {"launch_type": "launchType", "resource_version": "resourceVersion", "after_ms": "afterMs"}


def _camel(value: object) -> dict[str, Any]:
    return {_CAMEL.get(k, k): v for k, v in _json(value).items()}


@pytest.mark.parametrize("vector", cases("claim-watch.json"), ids=lambda v: v["case"])
def test_claim_watch(vector: dict[str, Any]) -> None:
    watch = UNSEEN_CLAIM
    for index, step in enumerate(vector["steps"]):
        watch, next_ = hear(watch, _heard(step["heard"]))
        assert _camel(next_) == step["next"], f"step {index}"
        if "watch" in step:
            assert {_CAMEL.get(k, k): v for k, v in vars(watch).items()} == step["watch"], f"step {index}"
