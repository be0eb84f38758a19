"""The blocking shell: runs the flows with the official `kubernetes` client's ApiClient (urllib3).

Only the ApiClient's request machinery is used (its kubeconfig, authentication, TLS and proxies), never
its generated models: every answer is read as plain JSON, field by field (_json.py)."""

import threading
import time
from collections.abc import Callable, Generator
from contextlib import closing
from typing import Any, TypeVar, cast

from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.watch.watch import iter_resp_lines

from . import _claim as claims
from . import _claim_watch as claim_watch
from . import _reference_flows as references
from . import _report_flows as reports
from ._claim import ClaimRequest, ClaimResult
from ._clock import now_millis, now_seconds
from ._disruption import DisruptionNotice
from ._errors import ForgetDeadlineError, SandboxClaimNotReadyError, SandboxNotReadyError
from ._loading import kubeconfig_present
from ._protocol import Call, Flow, Reply, Sender, WatchSender
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

    def _request(self, call: Call) -> Any:
        headers = {"Accept": "application/json"}
        if call.body is not None:
            headers["Content-Type"] = call.content_type
        method, url, header_params, body, post_params = self._api.param_serialize(
            method=call.method,
            resource_path=call.path,
            query_params=list(call.query.items()) if call.query else None,
            header_params=headers,
            body=call.body,
            auth_settings=["BearerToken"],
        )
        return self._api.call_api(
            method,
            url,
            header_params=header_params,
            body=body,
            post_params=post_params,
            _request_timeout=call.timeout,
        )

    def send(self, call: Call) -> Reply:
        try:
            response = self._request(call)
            data = response.read()
        except Exception as error:  # noqa: BLE001 - every failure is the Reply's; the flow raises it typed
            return Reply(None, error=error)
        return Reply(int(response.status), bytes(data or b""))

    def watch(self, call: Call) -> Generator[str | Reply, None, None]:
        """The ApiClient's answer streamed (its urllib3 response is never preloaded), line by line with the
        official client's own splitter (kubernetes.watch); closing this generator closes the stream."""
        try:
            response = self._request(call)
        except Exception as error:  # noqa: BLE001 - every failure is the Reply's; the shell judges it
            yield Reply(None, error=error)
            return
        stream = response.response
        try:
            if not 200 <= int(response.status) < 300:
                yield Reply(int(response.status), bytes(response.read() or b""))
                return
            for line in iter_resp_lines(stream):
                if line.strip():
                    yield line
        except Exception as error:  # noqa: BLE001 - a stream that breaks is a failed watch
            yield Reply(None, error=error)
        finally:
            stream.close()
            stream.release_conn()


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

    def disruption(self, namespace: str, sandbox: str, session: str) -> DisruptionNotice | None:
        """The drain notice on the session's reference (status.disruption): a drain is moving the sandbox's
        pods to another node, at the latest at moves_by; None when none is (or the reference is gone)."""
        return run(references.disruption(namespace, sandbox, session), self._transport)

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

    def __init__(
        self, api_client: k8s.ApiClient | None = None, *, transport: WatchSender | None = None
    ) -> None:
        """`api_client` defaults to load_api_client(); `transport` replaces the HTTP layer (tests, proxies):
        it makes requests and watches (WatchSender)."""
        if transport is None:
            transport = Transport(api_client if api_client is not None else load_api_client())
        if not callable(getattr(transport, "watch", None)):
            raise TypeError(
                "the transport of SandboxClaims must watch too (WatchSender): claim() watches its claim"
            )
        self._transport: WatchSender = transport

    def claim(
        self, request: ClaimRequest, *, deadline: float = 60.0, poll: float | None = None
    ) -> ClaimResult:
        """Creates the SandboxClaim as the caller, then watches it until the operator has bound it (its
        SessionReference exists from the bind) and the sandbox is Ready, or raises SandboxClaimNotReadyError
        after `deadline` seconds (the claim is kept). `poll` is ignored (the claim is watched, not polled)."""
        name, created = run(claims.create(request), self._transport)
        return self._wait(request.namespace, name, deadline, claim_watch.ClaimRead(created))

    def wait_until_ready(
        self, namespace: str, claim: str, *, deadline: float = 60.0, poll: float | None = None
    ) -> ClaimResult:
        """Waits for an existing claim: reads it, then watches it from the version read."""
        return self._wait(namespace, claim, deadline, None)

    def release(self, namespace: str, claim: str) -> str:
        """Deletes the claim: its reference is forgotten and its sandbox deleted by the ordinary decision
        (kept, Blocked, while other sessions use it). Returns "Released" or "AlreadyGone"."""
        return run(claims.release(namespace, claim), self._transport)

    def _read(self, namespace: str, claim: str) -> claim_watch.ClaimRead:
        body, gone = run(claims.read(namespace, claim), self._transport)
        return claim_watch.ClaimRead(body, gone)

    def _wait(
        self, namespace: str, claim: str, deadline: float, created: claim_watch.ClaimRead | None
    ) -> ClaimResult:
        ends = time.monotonic() + deadline
        watch, next_ = claim_watch.hear(claim_watch.UNSEEN_CLAIM, created or self._read(namespace, claim))
        failure: BaseException | None = None
        while True:
            if next_.kind == "Ready":
                assert next_.sandbox and next_.reference and next_.launch_type
                return ClaimResult(claim, next_.sandbox, next_.reference, next_.launch_type)
            if next_.kind == "Ended":
                assert next_.reason is not None
                raise SandboxClaimNotReadyError(namespace, claim, next_.reason, deadline, watch.seen)
            pause = (next_.after_ms or 0) / 1000
            if pause > 0:
                time.sleep(max(0.0, min(pause, ends - time.monotonic())))
            left = ends - time.monotonic()
            if left <= 0:
                raise SandboxClaimNotReadyError(
                    namespace, claim, "Deadline", deadline, watch.seen
                ) from failure
            if next_.kind == "Read":
                watch, next_ = claim_watch.hear(watch, self._read(namespace, claim))
                failure = None
            else:
                watch, next_, failure = self._watch_once(namespace, claim, watch, left, ends)

    def _watch_once(
        self, namespace: str, claim: str, watch: claim_watch.ClaimWatch, left: float, ends: float
    ) -> tuple[claim_watch.ClaimWatch, claim_watch.ClaimNext, BaseException | None]:
        """One watch of the claim until it decides something, ends, or the deadline passes."""
        call = claim_watch.watch_call(namespace, claim, watch.resource_version, left)
        with closing(self._transport.watch(call)) as stream:
            for item in stream:
                if isinstance(item, Reply):
                    # Its own bound (the deadline) ended it: as a watch ends, not as a failure.
                    if item.status is None and time.monotonic() >= ends:
                        break
                    watch, next_ = claim_watch.hear(watch, claim_watch.heard_end(item))
                    if next_.kind == "Refused":
                        raise claim_watch.refusal(call, next_.status or 0, item)
                    return watch, next_, item.error
                heard = claim_watch.heard_line(item)
                watch, next_ = claim_watch.hear(watch, heard)
                if next_.kind == "Refused":
                    raise claim_watch.refusal(call, next_.status or 0, heard)
                if next_.kind != "Listen":
                    return watch, next_, claim_watch.cause_of(heard)
                if time.monotonic() >= ends:
                    break
        watch, next_ = claim_watch.hear(watch, claim_watch.WatchClosed())
        return watch, next_, None
