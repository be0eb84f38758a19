"""The sans-I/O protocol between the client's flows and its two shells. A flow is a generator: it yields a
Call (one HTTP request) or a Deliver (the host's callback), and is sent back the Reply (or None after a
delivery). The sync shell answers with blocking I/O, the async shell with awaits; every decision and every
step is the flow's, written once."""

import json
from collections.abc import AsyncGenerator, Generator, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from ._errors import ApiAnswerError, KubeRequestError, KubeStep
from ._report import Deliver

T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    step: KubeStep
    #: What the request is about, for errors: e.g. "sessionreference ns/name".
    target: str
    method: Literal["GET", "POST", "PATCH", "DELETE"]
    #: The API path, already escaped.
    path: str
    query: Mapping[str, str] | None = None
    #: A JSON value, or None for no body.
    body: object = None
    content_type: str = "application/json"
    #: Seconds the whole request may take; None: no bound.
    timeout: float | None = None


@dataclass(frozen=True)
class Reply:
    """The API server's answer (`status`, `body`), or none at all (`status` None, `error` says why)."""

    status: int | None
    body: bytes = b""
    error: Exception | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class Sender(Protocol):
    """The blocking shell's port: one request, one Reply; never raises for a failed request."""

    def send(self, call: Call) -> Reply: ...


class AsyncSender(Protocol):
    """The asyncio shell's port: one request, one Reply; never raises for a failed request."""

    async def send(self, call: Call) -> Reply: ...


class WatchSender(Sender, Protocol):
    """The blocking shell's port for claim(): requests, and watches. A watch yields each line of its stream
    while it lasts; one last Reply when it was refused (its status) or failed (no status, `error` says why).
    Closing the generator ends the watch."""

    def watch(self, call: Call) -> Generator[str | Reply, None, None]: ...


class AsyncWatchSender(AsyncSender, Protocol):
    """The asyncio shell's port for claim(): requests, and watches, as WatchSender's."""

    def watch(self, call: Call) -> AsyncGenerator[str | Reply, None]: ...


Instruction = Call | Deliver
Flow = Generator[Instruction, Reply | None, T]


class _Gone:
    """A 404: the object does not exist (a value, not an error, where the call says so)."""


GONE = _Gone()
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


def send(call: Call) -> Flow[Reply]:
    reply = yield call
    if not isinstance(reply, Reply):
        raise TypeError(f"the shell answered {call.step} {call.target} with {reply!r}, not a Reply")
    return reply


def failure(call: Call, reply: Reply) -> KubeRequestError:
    if reply.status is None:
        cause: Exception = reply.error or ConnectionError("no answer")
        return KubeRequestError(call.step, call.target, None, cause)
    return KubeRequestError(
        call.step,
        call.target,
        reply.status,
        ApiAnswerError(reply.status, reply.body.decode("utf-8", "replace")),
    )


def decode(call: Call, reply: Reply) -> object:
    """The answer's JSON (None for an empty body); a body that is not JSON is a failed request."""
    if not reply.body:
        return None
    try:
        return json.loads(reply.body)
    except ValueError as error:
        raise KubeRequestError(call.step, call.target, reply.status, error) from error


def request(call: Call) -> Flow[object]:
    """Runs one request: its JSON answer, or KubeRequestError naming the step and target."""
    reply = yield from send(call)
    if not reply.ok:
        raise failure(call, reply)
    return decode(call, reply)


def request_unless_gone(call: Call) -> Flow[object]:
    """Like request, but a 404 is the value GONE."""
    reply = yield from send(call)
    if reply.status == 404:
        return GONE
    if not reply.ok:
        raise failure(call, reply)
    return decode(call, reply)
