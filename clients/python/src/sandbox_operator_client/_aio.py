"""The asyncio shell: runs the same flows with the official client's asyncio ApiClient (`kubernetes.aio`,
aiohttp). A forget past its deadline cancels its request instead of leaving a thread behind."""

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from typing import Any, TypeVar, cast

from kubernetes.aio import client as k8s
from kubernetes.aio import config as k8s_config

from . import _claim as claims
from . import _claim_watch as claim_watch
from . import _reference_flows as references
from . import _report_flows as reports
from ._claim import ClaimRequest, ClaimResult
from ._clock import now_millis, now_seconds
from ._disruption import DisruptionNotice
from ._errors import ForgetDeadlineError, SandboxClaimNotReadyError, SandboxNotReadyError
from ._loading import kubeconfig_present
from ._protocol import AsyncSender, AsyncWatchSender, Call, Flow, Reply
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


async def load_async_api_client(
    config_file: str | None = None, context: str | None = None, user_agent: str = CLIENT_USER_AGENT
) -> k8s.ApiClient:
    """An asyncio ApiClient from KUBECONFIG, else ~/.kube/config, else the pod's service account; its
    requests carry `user_agent`. Close it (`await api_client.close()`, or `async with`) when done."""
    if config_file is not None or context is not None or kubeconfig_present():
        loaded = await k8s_config.new_client_from_config(config_file=config_file, context=context)
        api = cast(k8s.ApiClient, loaded)
    else:
        configuration = k8s.Configuration()
        k8s_config.load_incluster_config(client_configuration=configuration)
        api = k8s.ApiClient(configuration)
    api.user_agent = user_agent
    return api


class AsyncTransport:
    """One HTTP request per Call, through the asyncio ApiClient; every failure becomes a Reply."""

    def __init__(self, api_client: k8s.ApiClient) -> None:
        self._api = api_client

    async def _request(self, call: Call) -> Any:
        headers = {"Accept": "application/json"}
        if call.body is not None:
            headers["Content-Type"] = call.content_type
        method, url, header_params, body, post_params = await self._api.param_serialize(
            method=call.method,
            resource_path=call.path,
            query_params=list(call.query.items()) if call.query else None,
            header_params=headers,
            body=call.body,
            auth_settings=["BearerToken"],
        )
        return await self._api.call_api(
            method,
            url,
            header_params=header_params,
            body=body,
            post_params=post_params,
            _request_timeout=call.timeout,
        )

    async def send(self, call: Call) -> Reply:
        try:
            response = await self._request(call)
            data = await response.read()
        except Exception as error:  # noqa: BLE001 - every failure is the Reply's; the flow raises it typed
            return Reply(None, error=error)
        return Reply(int(response.status), bytes(data or b""))

    async def watch(self, call: Call) -> AsyncGenerator[str | Reply, None]:
        """The ApiClient's answer streamed (its aiohttp response is read line by line, never whole); its
        `timeout` bounds the whole watch; closing this generator closes the stream."""
        try:
            response = await self._request(call)
        except Exception as error:  # noqa: BLE001 - every failure is the Reply's; the shell judges it
            yield Reply(None, error=error)
            return
        stream = response.response
        try:
            if not 200 <= int(response.status) < 300:
                yield Reply(int(response.status), bytes(await response.read() or b""))
                return
            while line := await stream.content.readline():
                text = line.decode("utf-8", "replace").strip()
                if text:
                    yield text
        except Exception as error:  # noqa: BLE001 - a stream that breaks is a failed watch
            yield Reply(None, error=error)
        finally:
            stream.close()


async def run(
    flow: Flow[T], transport: AsyncSender, deliver: Callable[[Reported], Awaitable[None]] | None = None
) -> T:
    """Drives a flow to its end: each Call through the transport, each Deliver through `deliver`."""
    try:
        instruction = next(flow)
        while True:
            if isinstance(instruction, Deliver):
                if deliver is None:
                    raise TypeError("this flow delivers a report, and no deliver callback was given")
                await deliver(Reported(instruction.report))
                instruction = flow.send(None)
            else:
                instruction = flow.send(await transport.send(instruction))
    except StopIteration as stop:
        return cast(T, stop.value)
    finally:
        flow.close()


class AsyncSessionReferences:
    """attach, detach, forget and prune_worktree for an asyncio agent host (docs/client.md)."""

    def __init__(
        self, api_client: k8s.ApiClient | None = None, *, transport: AsyncSender | None = None
    ) -> None:
        """Give `api_client` (load_async_api_client()) or `transport` (the HTTP layer: tests, proxies)."""
        if transport is None and api_client is None:
            raise TypeError("give api_client (await load_async_api_client()) or transport")
        self._transport: AsyncSender = (
            transport if transport is not None else AsyncTransport(cast(k8s.ApiClient, api_client))
        )

    async def attach(
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
        name = await run(references.attach(request, resume), self._transport)
        if wait_ready is None:
            return name
        loop = asyncio.get_running_loop()
        deadline, seen = loop.time() + wait_ready, "not read yet"
        while True:
            readiness = await run(references.readiness(request.namespace, request.sandbox), self._transport)
            if readiness.kind == "Ready":
                return name
            if readiness.kind != "NotReady":
                raise SandboxNotReadyError(
                    request.namespace, request.sandbox, readiness.kind, wait_ready, seen
                )
            seen = readiness.seen or seen
            left = deadline - loop.time()
            if left <= 0:
                raise SandboxNotReadyError(request.namespace, request.sandbox, "Deadline", wait_ready, seen)
            await asyncio.sleep(min(poll, left))

    async def detach(self, namespace: str, sandbox: str, session: str) -> None:
        """Marks the reference Detached: a tombstone that keeps blocking destruction until pruned or forgotten."""
        await run(references.detach(namespace, sandbox, session, now_seconds()), self._transport)

    async def disruption(self, namespace: str, sandbox: str, session: str) -> DisruptionNotice | None:
        """The drain notice on the session's reference (status.disruption): a drain is moving the sandbox's
        pods to another node, at the latest at moves_by; None when none is (or the reference is gone)."""
        return await run(references.disruption(namespace, sandbox, session), self._transport)

    async def forget(self, namespace: str, sandbox: str, session: str, deadline: float = 2.0) -> ForgetResult:
        """Deletes the reference within `deadline` seconds. Never raises: Forgotten, AlreadyGone, or
        ForgetFailed (also when the deadline passed; the delete may still land)."""
        # The deadline is wait_for's, which cancels the request; none of the request's own could end it first.
        try:
            return await asyncio.wait_for(
                run(references.forget(namespace, sandbox, session, None), self._transport), deadline
            )
        except asyncio.TimeoutError:
            return ForgetFailed(ForgetDeadlineError(deadline))
        except Exception as error:  # noqa: BLE001 - forget reports every failure as a value
            return ForgetFailed(error)

    async def prune_worktree(self, namespace: str, worktree: str) -> list[str]:
        """Deletes the Detached references of a worktree; returns the names deleted. Attached ones, and any
        re-attached since the list, are kept."""
        return await run(references.prune_worktree(namespace, worktree), self._transport)


class AsyncCompletionReports:
    """The agent host's side of report-to-parent-once, for asyncio (docs/client.md)."""

    def __init__(
        self, api_client: k8s.ApiClient | None = None, *, transport: AsyncSender | None = None
    ) -> None:
        """Give `api_client` (load_async_api_client()) or `transport` (the HTTP layer: tests, proxies)."""
        if transport is None and api_client is None:
            raise TypeError("give api_client (await load_async_api_client()) or transport")
        self._transport: AsyncSender = (
            transport if transport is not None else AsyncTransport(cast(k8s.ApiClient, api_client))
        )

    async def record_turn(self, namespace: str, reference: str, turn: TurnRecord) -> None:
        """Writes the session's status.turn and, for an ended turn, appends it to status.endedTurns."""
        await run(reports.record_turn(namespace, reference, turn, now_millis()), self._transport)

    async def report_once(
        self, request: ReportRequest, deliver: Callable[[Reported], Awaitable[None]]
    ) -> ReportOutcome:
        """Awaits `deliver` when the parent must hear, once per (delegation, turn) across host restarts."""
        return await run(reports.report_once(request), self._transport, deliver)


class AsyncSandboxClaims:
    """claim() for asyncio: a sandbox from a warm pool or a template, bound by the operator (docs/client.md)."""

    def __init__(
        self, api_client: k8s.ApiClient | None = None, *, transport: AsyncWatchSender | None = None
    ) -> None:
        """Give `api_client` (load_async_api_client()) or `transport` (the HTTP layer: tests, proxies; it
        makes requests and watches, AsyncWatchSender)."""
        if transport is None and api_client is None:
            raise TypeError("give api_client (await load_async_api_client()) or transport")
        chosen = transport if transport is not None else AsyncTransport(cast(k8s.ApiClient, api_client))
        if not callable(getattr(chosen, "watch", None)):
            raise TypeError(
                "the transport of AsyncSandboxClaims must watch too (AsyncWatchSender): claim() watches its claim"
            )
        self._transport: AsyncWatchSender = chosen

    async def claim(
        self, request: ClaimRequest, *, deadline: float = 60.0, poll: float | None = None
    ) -> ClaimResult:
        """Creates the SandboxClaim as the caller, then watches it until it is bound and Ready, or raises
        SandboxClaimNotReadyError after `deadline` seconds (the claim is kept). `poll` is ignored."""
        name, created = await run(claims.create(request), self._transport)
        return await self._wait(request.namespace, name, deadline, claim_watch.ClaimRead(created))

    async def wait_until_ready(
        self, namespace: str, claim: str, *, deadline: float = 60.0, poll: float | None = None
    ) -> ClaimResult:
        """Waits for an existing claim: reads it, then watches it from the version read."""
        return await self._wait(namespace, claim, deadline, None)

    async def release(self, namespace: str, claim: str) -> str:
        """Deletes the claim: its reference is forgotten and its sandbox deleted by the ordinary decision."""
        return await run(claims.release(namespace, claim), self._transport)

    async def _read(self, namespace: str, claim: str) -> claim_watch.ClaimRead:
        body, gone = await run(claims.read(namespace, claim), self._transport)
        return claim_watch.ClaimRead(body, gone)

    async def _wait(
        self, namespace: str, claim: str, deadline: float, created: claim_watch.ClaimRead | None
    ) -> ClaimResult:
        loop = asyncio.get_running_loop()
        ends = loop.time() + deadline
        first = created or await self._read(namespace, claim)
        watch, next_ = claim_watch.hear(claim_watch.UNSEEN_CLAIM, first)
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
                await asyncio.sleep(max(0.0, min(pause, ends - loop.time())))
            left = ends - loop.time()
            if left <= 0:
                raise SandboxClaimNotReadyError(
                    namespace, claim, "Deadline", deadline, watch.seen
                ) from failure
            if next_.kind == "Read":
                watch, next_ = claim_watch.hear(watch, await self._read(namespace, claim))
                failure = None
            else:
                watch, next_, failure = await self._watch_once(namespace, claim, watch, left, ends)

    async def _watch_once(
        self, namespace: str, claim: str, watch: claim_watch.ClaimWatch, left: float, ends: float
    ) -> tuple[claim_watch.ClaimWatch, claim_watch.ClaimNext, BaseException | None]:
        """One watch of the claim until it decides something, ends, or the deadline passes."""
        loop = asyncio.get_running_loop()
        call = claim_watch.watch_call(namespace, claim, watch.resource_version, left)
        async with aclosing(self._transport.watch(call)) as stream:
            async for item in stream:
                if isinstance(item, Reply):
                    # Its own bound (the deadline) ended it: as a watch ends, not as a failure.
                    if item.status is None and loop.time() >= ends:
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
                if loop.time() >= ends:
                    break
        watch, next_ = claim_watch.hear(watch, claim_watch.WatchClosed())
        return watch, next_, None
