"""Scripted transports for the shells: each expects the next request (method and path) and answers with the
Reply the script gives, so a test reads as the conversation with the API server it proves."""

import asyncio
import json
import threading
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
class Script:
    steps: list[Step]
    calls: list[Call] = field(default_factory=list)

    def next(self, call: Call) -> Reply:
        self.calls.append(call)
        assert self.steps, f"unexpected {call.method} {call.path}"
        step = self.steps.pop(0)
        assert (call.method, call.path.endswith(step.path_end)) == (step.method, True), (
            f"expected {step.method} …{step.path_end}, got {call.method} {call.path}"
        )
        return step.reply

    def done(self) -> None:
        assert not self.steps, f"never asked: {[(s.method, s.path_end) for s in self.steps]}"


class SyncScripted:
    def __init__(self, script: Script) -> None:
        self.script = script

    def send(self, call: Call) -> Reply:
        return self.script.next(call)


class AsyncScripted:
    def __init__(self, script: Script) -> None:
        self.script = script

    async def send(self, call: Call) -> Reply:
        await asyncio.sleep(0)
        return self.script.next(call)


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
