"""The conformance driver for the Python client (test/conformance/protocol.md), blocking (--mode sync) or
asyncio (--mode async): JSON lines on stdin, answers on stdout, one request at a time. It translates and
decides nothing.

    python test/conformance/drivers/python_driver.py --mode sync --kubeconfig PATH
"""

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from kubernetes.aio.client import ApiClient as AsyncApiClient

from sandbox_operator_client import (
    AlreadyReported,
    AsyncCompletionReports,
    AsyncSandboxClaims,
    AsyncSessionReferences,
    AttachRequest,
    ClaimRequest,
    ClaimResult,
    CompletionReports,
    ForgetFailed,
    ForgetResult,
    KubeRequestError,
    Reported,
    ReportOutcome,
    ReportRequest,
    SandboxClaimNotReadyError,
    SandboxClaims,
    SandboxDeletingError,
    SandboxNotReadyError,
    SandboxResumeForbiddenError,
    SessionReferenceConflictError,
    SessionReferences,
    TurnRecord,
    load_api_client,
    load_async_api_client,
)

CRASHED = 75


def write(answer: object) -> None:
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


def error_of(error: BaseException) -> dict[str, Any]:
    if isinstance(error, SandboxDeletingError):
        return {
            "kind": "SandboxDeleting",
            "reason": error.reason,
            "since": error.since,
            "withdrawal": error.withdrawal,
            "message": str(error),
        }
    if isinstance(error, SessionReferenceConflictError):
        return {
            "kind": "SessionReferenceConflict",
            "name": error.reference,
            "field": error.field,
            "requested": error.requested,
            "found": error.found,
            "message": str(error),
        }
    if isinstance(error, SandboxClaimNotReadyError):
        return {"kind": error.kind, "reason": error.reason, "seen": error.seen, "message": str(error)}
    if isinstance(error, SandboxNotReadyError):
        return {"kind": error.kind, "reason": error.reason, "seen": error.seen, "message": str(error)}
    if isinstance(error, SandboxResumeForbiddenError):
        return {"kind": error.kind, "message": str(error)}
    if isinstance(error, KubeRequestError):
        return {
            "kind": "KubeRequestFailed",
            "step": error.step,
            "target": error.target,
            "status": error.status,
            "message": str(error),
        }
    return {"kind": "Other", "message": str(error)}


def forget_of(result: ForgetResult) -> dict[str, Any]:
    if isinstance(result, ForgetFailed):
        return {"kind": "Failed", "error": error_of(result.error)}
    return {"kind": result.kind}


def outcome_of(outcome: ReportOutcome) -> dict[str, Any]:
    if isinstance(outcome, Reported):
        return {"kind": "Reported", "reason": outcome.report.reason, "key": outcome.report.key}
    if isinstance(outcome, AlreadyReported):
        return {"kind": "AlreadyReported", "key": outcome.key}
    return {"kind": "NotReported", "reason": outcome.reason}


def attach_options(args: dict[str, Any]) -> dict[str, Any]:
    """The attach's options beside the request: `resume` (default true), `waitReadyMs` (no wait when absent)."""
    options: dict[str, Any] = {"resume": args.get("resume", True) is not False}
    if isinstance(args.get("waitReadyMs"), (int, float)):
        options.update(wait_ready=args["waitReadyMs"] / 1000, poll=0.2)
    return options


def attach_request(args: dict[str, Any]) -> AttachRequest:
    return AttachRequest(
        namespace=args["namespace"],
        sandbox=args["sandbox"],
        session=args["session"],
        worktree=args.get("worktree"),
        route=args["route"],
        role=args["role"],
        parent_session=args.get("parentSession"),
    )


def claim_request(args: dict[str, Any]) -> ClaimRequest:
    return ClaimRequest(
        namespace=args["namespace"],
        name=args.get("name"),
        session=args["session"],
        route=args["route"],
        role=args["role"],
        warm_pool=(args.get("warmPoolRef") or {}).get("name"),
        template=(args.get("templateRef") or {}).get("name"),
        worktree=args.get("worktree"),
        parent_session=args.get("parentSession"),
    )


def claim_of(result: ClaimResult) -> dict[str, Any]:
    return {
        "claim": result.claim,
        "sandbox": result.sandbox,
        "reference": result.reference,
        "launchType": result.launch_type,
    }


def report_request(args: dict[str, Any]) -> ReportRequest:
    return ReportRequest(
        namespace=args["namespace"],
        reference=args["reference"],
        child_session=args["childSession"],
        delegation_id=args["delegationId"],
        delegation=args["delegation"],
        turn_id=args["turnId"],
    )


def turn_record(raw: dict[str, Any]) -> TurnRecord:
    return TurnRecord(
        id=raw["id"], phase=raw["phase"], origin=raw["origin"], joined_origins=raw["joinedOrigins"]
    )


def delivery(request_id: int, mode: str, delivered: list[dict[str, Any]]) -> Callable[[Reported], None]:
    def deliver(reported: Reported) -> None:
        delivered.append({"reason": reported.report.reason, "key": reported.report.key})
        if mode == "fail":
            raise RuntimeError("the delivery failed")
        if mode == "crash":
            write({"id": request_id, "crashed": True, "delivered": delivered})
            os._exit(CRASHED)  # the host dies between delivery and spend: nothing else runs

    return deliver


Handler = Callable[[int, dict[str, Any]], Awaitable[object]]


def sync_handlers(
    references: SessionReferences, reports: CompletionReports, claims: SandboxClaims
) -> dict[str, Handler]:
    """The blocking client's calls, each wrapped as a coroutine so one loop serves both modes."""

    async def claim(_: int, args: dict[str, Any]) -> object:
        return claim_of(claims.claim(claim_request(args), deadline=args["deadlineMs"] / 1000, poll=0.2))

    async def release_claim(_: int, args: dict[str, Any]) -> object:
        return claims.release(args["namespace"], args["claim"])

    async def attach(_: int, args: dict[str, Any]) -> object:
        return references.attach(attach_request(args), **attach_options(args))

    async def detach(_: int, args: dict[str, Any]) -> object:
        references.detach(args["namespace"], args["sandbox"], args["session"])
        return None

    async def forget(_: int, args: dict[str, Any]) -> object:
        deadline = args["deadlineMs"] / 1000
        return forget_of(references.forget(args["namespace"], args["sandbox"], args["session"], deadline))

    async def prune(_: int, args: dict[str, Any]) -> object:
        return references.prune_worktree(args["namespace"], args["worktree"])

    async def record(_: int, args: dict[str, Any]) -> object:
        reports.record_turn(args["namespace"], args["reference"], turn_record(args["turn"]))
        return None

    async def report(request_id: int, args: dict[str, Any]) -> object:
        delivered: list[dict[str, Any]] = []
        outcome = reports.report_once(report_request(args), delivery(request_id, args["deliver"], delivered))
        return {"outcome": outcome_of(outcome), "delivered": delivered}

    return {
        "claim": claim,
        "releaseClaim": release_claim,
        "attach": attach,
        "detach": detach,
        "forget": forget,
        "pruneWorktree": prune,
        "recordTurn": record,
        "reportOnce": report,
    }


def async_handlers(
    references: AsyncSessionReferences, reports: AsyncCompletionReports, claims: AsyncSandboxClaims
) -> dict[str, Handler]:
    """The asyncio client's calls."""

    async def claim(_: int, args: dict[str, Any]) -> object:
        deadline = args["deadlineMs"] / 1000
        return claim_of(await claims.claim(claim_request(args), deadline=deadline, poll=0.2))

    async def release_claim(_: int, args: dict[str, Any]) -> object:
        return await claims.release(args["namespace"], args["claim"])

    async def attach(_: int, args: dict[str, Any]) -> object:
        return await references.attach(attach_request(args), **attach_options(args))

    async def detach(_: int, args: dict[str, Any]) -> object:
        await references.detach(args["namespace"], args["sandbox"], args["session"])
        return None

    async def forget(_: int, args: dict[str, Any]) -> object:
        deadline = args["deadlineMs"] / 1000
        return forget_of(
            await references.forget(args["namespace"], args["sandbox"], args["session"], deadline)
        )

    async def prune(_: int, args: dict[str, Any]) -> object:
        return await references.prune_worktree(args["namespace"], args["worktree"])

    async def record(_: int, args: dict[str, Any]) -> object:
        await reports.record_turn(args["namespace"], args["reference"], turn_record(args["turn"]))
        return None

    async def report(request_id: int, args: dict[str, Any]) -> object:
        delivered: list[dict[str, Any]] = []
        deliver = delivery(request_id, args["deliver"], delivered)

        async def awaited(reported: Reported) -> None:
            deliver(reported)

        outcome = await reports.report_once(report_request(args), awaited)
        return {"outcome": outcome_of(outcome), "delivered": delivered}

    return {
        "claim": claim,
        "releaseClaim": release_claim,
        "attach": attach,
        "detach": detach,
        "forget": forget,
        "pruneWorktree": prune,
        "recordTurn": record,
        "reportOnce": report,
    }


async def serve(mode: str, default: str) -> None:
    """Answers requests in order, one at a time; a client per kubeconfig."""
    handlers: dict[str, dict[str, Handler]] = {}
    opened: list[AsyncApiClient] = []
    loop = asyncio.get_running_loop()
    try:
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            if not line.strip():
                continue
            request = json.loads(line)
            path = request.get("kubeconfig") or default
            if path not in handlers:
                if mode == "sync":
                    api = load_api_client(config_file=path)
                    handlers[path] = sync_handlers(
                        SessionReferences(api), CompletionReports(api), SandboxClaims(api)
                    )
                else:
                    async_api = await load_async_api_client(config_file=path)
                    opened.append(async_api)
                    handlers[path] = async_handlers(
                        AsyncSessionReferences(async_api),
                        AsyncCompletionReports(async_api),
                        AsyncSandboxClaims(async_api),
                    )
            request_id, op = request["id"], request["op"]
            try:
                if op not in handlers[path]:
                    raise ValueError(f"unknown op {op}")
                value = await handlers[path][op](request_id, request["args"])
                write({"id": request_id, "ok": True, "value": value})
            except Exception as error:  # noqa: BLE001 - every failure is the answer's, as the protocol says
                write({"id": request_id, "ok": False, "error": error_of(error)})
    finally:
        for async_api in opened:
            await async_api.close()  # type: ignore[no-untyped-call]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["sync", "async"], required=True)
    parser.add_argument("--kubeconfig", required=True)
    options = parser.parse_args()
    asyncio.run(serve(options.mode, options.kubeconfig))


if __name__ == "__main__":
    main()
