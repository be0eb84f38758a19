"""Scripted transports for the shells: each expects the next request (method and path) and answers with the
Reply the script gives, so a test reads as the conversation with the API server it proves."""

import asyncio
import json
import threading
import time
from collections.abc import AsyncGenerator, Generator, Sequence
from dataclasses import dataclass, field

from sandbox_operator_client._protocol import Call, Reply


def answer(status: int, body: object = None) -> Reply:
    return Reply(status, b"" if body is None else json.dumps(body).encode())


@dataclass
class Step:
    method: str
    path_end: str
    reply: Reply


@dataclass
class Watched:
    """A watch's script: the events its stream carries (`event(...)` lines), then how it ends: a Reply (refused
    or failed), None (the server ended it), or `hang` (silent until the call's own timeout)."""

    path_end: str
    lines: list[str] = field(default_factory=list)
    end: Reply | None = None
    hang: bool = False


def event(kind: str, value: object) -> str:
    return json.dumps({"type": kind, "object": value})


class Script:
    def __init__(self, steps: Sequence[Step | Watched]) -> None:
        self.steps: list[Step | Watched] = list(steps)
        self.calls: list[Call] = []

    def next(self, call: Call) -> Reply:
        self.calls.append(call)
        assert self.steps, f"unexpected {call.method} {call.path}"
        step = self.steps.pop(0)
        assert isinstance(step, Step), f"expected a watch of …{step.path_end}, got {call.method} {call.path}"
        assert (call.method, call.path.endswith(step.path_end)) == (step.method, True), (
            f"expected {step.method} …{step.path_end}, got {call.method} {call.path}"
        )
        return step.reply

    def next_watch(self, call: Call) -> Watched:
        self.calls.append(call)
        assert self.steps, f"unexpected watch {call.path}"
        step = self.steps.pop(0)
        assert isinstance(step, Watched), (
            f"expected {step.method} …{step.path_end}, got a watch of {call.path}"
        )
        assert call.path.endswith(step.path_end), f"expected a watch of …{step.path_end}, got {call.path}"
        assert call.query is not None and call.query.get("watch") == "true", call.query
        return step

    def done(self) -> None:
        assert not self.steps, (
            f"never asked: {[(getattr(s, 'method', 'WATCH'), s.path_end) for s in self.steps]}"
        )


class SyncScripted:
    def __init__(self, script: Script) -> None:
        self.script = script

    def send(self, call: Call) -> Reply:
        return self.script.next(call)

    def watch(self, call: Call) -> Generator[str | Reply, None, None]:
        step = self.script.next_watch(call)
        yield from step.lines
        if step.hang:
            time.sleep(call.timeout or 10)
            yield Reply(None, error=TimeoutError("read timed out"))
        elif step.end is not None:
            yield step.end


class AsyncScripted:
    def __init__(self, script: Script) -> None:
        self.script = script

    async def send(self, call: Call) -> Reply:
        await asyncio.sleep(0)
        return self.script.next(call)

    async def watch(self, call: Call) -> AsyncGenerator[str | Reply, None]:
        step = self.script.next_watch(call)
        for line in step.lines:
            await asyncio.sleep(0)
            yield line
        if step.hang:
            await asyncio.sleep(call.timeout or 10)
            yield Reply(None, error=TimeoutError("timed out"))
        elif step.end is not None:
            yield step.end


class Unanswered:
    """A transport whose requests the server never answers (until released)."""

    def __init__(self) -> None:
        self.released = threading.Event()

    def send(self, call: Call) -> Reply:
        self.released.wait(10)
        return Reply(None, error=TimeoutError("released"))


class AsyncUnanswered:
    def __init__(self) -> None:
        self.cancelled = False

    async def send(self, call: Call) -> Reply:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return Reply(None, error=TimeoutError("slept"))
