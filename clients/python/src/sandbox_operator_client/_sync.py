"""The blocking shell: runs the flows with the official `kubernetes` client's ApiClient (urllib3).

Only the ApiClient's request machinery is used (its kubeconfig, authentication, TLS and proxies), never
its generated models: every answer is read as plain JSON, field by field (_json.py)."""

import threading
import time
from collections.abc import Callable
from typing import TypeVar, cast

from kubernetes import client as k8s
from kubernetes import config as k8s_config

from . import _claim as claims
from . import _reference_flows as references
from . import _report_flows as reports
from ._claim import ClaimRequest, ClaimResult
from ._clock import now_millis, now_seconds
from ._errors import ForgetDeadlineError, SandboxClaimNotReadyError, SandboxNotReadyError
from ._loading import kubeconfig_present
from ._protocol import Call, Flow, Reply, Sender
from ._report import Deliver
from ._types import (
    AttachRequest,
    ForgetFailed,
    ForgetResult,
    Reported,
    ReportOutcome,
    ReportRequest,
    TurnRecord,
)
from ._vocabulary import CLIENT_USER_AGENT

T = TypeVar("T")


def load_api_client(
    config_file: str | None = None, context: str | None = None, user_agent: str = CLIENT_USER_AGENT
) -> k8s.ApiClient:
    """An ApiClient from KUBECONFIG, else ~/.kube/config, else the pod's service account; its requests carry
    `user_agent` (name your host; the default names this client, never the operator)."""
    if config_file is not None or context is not None or kubeconfig_present():
        api = cast(k8s.ApiClient, k8s_config.new_client_from_config(config_file=config_file, context=context))
    else:
        configuration = k8s.Configuration()
        k8s_config.load_incluster_config(client_configuration=configuration)
        api = k8s.ApiClient(configuration)
    api.user_agent = user_agent
    return api


class Transport:
    """One HTTP request per Call, through the ApiClient; every failure becomes a Reply."""

    def __init__(self, api_client: k8s.ApiClient) -> None:
        self._api = api_client

    def send(self, call: Call) -> Reply:
        headers = {"Accept": "application/json"}
        if call.body is not None:
            headers["Content-Type"] = call.content_type
        try:
            method, url, header_params, body, post_params = self._api.param_serialize(
                method=call.method,
                resource_path=call.path,
                query_params=list(call.query.items()) if call.query else None,
                header_params=headers,
                body=call.body,
                auth_settings=["BearerToken"],
            )
            response = self._api.call_api(
                method,
                url,
                header_params=header_params,
                body=body,
                post_params=post_params,
                _request_timeout=call.timeout,
            )
            data = response.read()
        except Exception as error:  # noqa: BLE001 - every failure is the Reply's; the flow raises it typed
            return Reply(None, error=error)
        return Reply(int(response.status), bytes(data or b""))


def run(flow: Flow[T], transport: Sender, deliver: Callable[[Reported], None] | None = None) -> T:
    """Drives a flow to its end: each Call through the transport, each Deliver through `deliver`."""
    try:
        instruction = next(flow)
        while True:
            if isinstance(instruction, Deliver):
                if deliver is None:
                    raise TypeError("this flow delivers a report, and no deliver callback was given")
                deliver(Reported(instruction.report))
                instruction = flow.send(None)
            else:
                instruction = flow.send(transport.send(instruction))
    except StopIteration as stop:
        return cast(T, stop.value)
    finally:
        flow.close()


class SessionReferences:
    """attach, detach, forget and prune_worktree for an agent host (docs/client.md)."""

    def __init__(self, api_client: k8s.ApiClient | None = None, *, transport: Sender | None = None) -> None:
        """`api_client` defaults to load_api_client(); `transport` replaces the HTTP layer (tests, proxies)."""
        if transport is None:
            transport = Transport(api_client if api_client is not None else load_api_client())
        self._transport: Sender = transport

    def attach(
        self,
        request: AttachRequest,
        *,
        resume: bool = True,
        wait_ready: float | None = None,
        poll: float = 0.5,
    ) -> str:
        """Records the attach and returns the reference's name. Raises SandboxDeletingError when the fence is
        up, after withdrawing only what this call wrote. Start the session only after it returns.

        A sandbox suspended by its spec is resumed (SandboxResumeForbiddenError when this identity may not);
        with `wait_ready` (seconds) it returns once the sandbox is Ready, read every `poll` seconds, or raises
        SandboxNotReadyError. The reference stays Attached either way."""
        name = run(references.attach(request, resume), self._transport)
        if wait_ready is None:
            return name
        deadline, seen = time.monotonic() + wait_ready, "not read yet"
        while True:
            readiness = run(references.readiness(request.namespace, request.sandbox), self._transport)
            if readiness.kind == "Ready":
                return name
            if readiness.kind != "NotReady":
                raise SandboxNotReadyError(
                    request.namespace, request.sandbox, readiness.kind, wait_ready, seen
                )
            seen = readiness.seen or seen
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxNotReadyError(request.namespace, request.sandbox, "Deadline", wait_ready, seen)
            time.sleep(min(poll, left))

    def detach(self, namespace: str, sandbox: str, session: str) -> None:
        """Marks the reference Detached: a tombstone that keeps blocking destruction until pruned or forgotten."""
        run(references.detach(namespace, sandbox, session, now_seconds()), self._transport)

    def forget(self, namespace: str, sandbox: str, session: str, deadline: float = 2.0) -> ForgetResult:
        """Deletes the reference within `deadline` seconds. Never raises: Forgotten, AlreadyGone, or
        ForgetFailed (also when the deadline passed; the delete may still land)."""
        outcome: list[ForgetResult] = []

        def work() -> None:
            try:
                outcome.append(run(references.forget(namespace, sandbox, session, deadline), self._transport))
            except Exception as error:  # noqa: BLE001 - forget reports every failure as a value
                outcome.append(ForgetFailed(error))

        # A daemon thread, so a request the server never answers cannot hold the caller past the deadline,
        # nor the process at exit.
        worker = threading.Thread(target=work, name="sandbox-operator-forget", daemon=True)
        worker.start()
        worker.join(deadline)
        return outcome[0] if outcome else ForgetFailed(ForgetDeadlineError(deadline))

    def prune_worktree(self, namespace: str, worktree: str) -> list[str]:
        """Deletes the Detached references of a worktree; returns the names deleted. Attached ones, and any
        re-attached since the list, are kept."""
        return run(references.prune_worktree(namespace, worktree), self._transport)


class CompletionReports:
    """The agent host's side of report-to-parent-once (docs/client.md)."""

    def __init__(self, api_client: k8s.ApiClient | None = None, *, transport: Sender | None = None) -> None:
        """`api_client` defaults to load_api_client(); `transport` replaces the HTTP layer (tests, proxies)."""
        if transport is None:
            transport = Transport(api_client if api_client is not None else load_api_client())
        self._transport: Sender = transport

    def record_turn(self, namespace: str, reference: str, turn: TurnRecord) -> None:
        """Writes the session's status.turn and, for an ended turn, appends it to status.endedTurns."""
        run(reports.record_turn(namespace, reference, turn, now_millis()), self._transport)

    def report_once(self, request: ReportRequest, deliver: Callable[[Reported], None]) -> ReportOutcome:
        """Calls `deliver` when the parent must hear, once per (delegation, turn) across host restarts."""
        return run(reports.report_once(request), self._transport, deliver)


class SandboxClaims:
    """claim(): a sandbox from a warm pool or a template for one session, bound by the operator (docs/client.md)."""

    def __init__(self, api_client: k8s.ApiClient | None = None, *, transport: Sender | None = None) -> None:
        """`api_client` defaults to load_api_client(); `transport` replaces the HTTP layer (tests, proxies)."""
        if transport is None:
            transport = Transport(api_client if api_client is not None else load_api_client())
        self._transport: Sender = transport

    def claim(self, request: ClaimRequest, *, deadline: float = 60.0, poll: float = 0.5) -> ClaimResult:
        """Creates the SandboxClaim as the caller, then waits until the operator has bound it (its
        SessionReference exists from the bind) and the sandbox is Ready, or raises SandboxClaimNotReadyError
        after `deadline` seconds (the claim is kept)."""
        name = run(claims.create(request), self._transport)
        return self.wait_until_ready(request.namespace, name, deadline=deadline, poll=poll)

    def wait_until_ready(
        self, namespace: str, claim: str, *, deadline: float = 60.0, poll: float = 0.5
    ) -> ClaimResult:
        """Waits for an existing claim; the first reads come soon, then every `poll` seconds."""
        ends, seen, pause = time.monotonic() + deadline, "not read yet", 0.02
        while True:
            readiness = run(claims.readiness(namespace, claim), self._transport)
            if readiness.kind == "Ready":
                assert readiness.sandbox and readiness.reference and readiness.launch_type
                return ClaimResult(claim, readiness.sandbox, readiness.reference, readiness.launch_type)
            if readiness.kind != "Waiting":
                raise SandboxClaimNotReadyError(namespace, claim, readiness.kind, deadline, seen)
            seen = readiness.seen or seen
            left = ends - time.monotonic()
            if left <= 0:
                raise SandboxClaimNotReadyError(namespace, claim, "Deadline", deadline, seen)
            time.sleep(min(pause, left))
            pause = min(pause * 2, poll)

    def release(self, namespace: str, claim: str) -> str:
        """Deletes the claim: its reference is forgotten and its sandbox deleted by the ordinary decision
        (kept, Blocked, while other sessions use it). Returns "Released" or "AlreadyGone"."""
        return run(claims.release(namespace, claim), self._transport)
