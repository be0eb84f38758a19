"""Both shells behind one face, so every flow test runs for the blocking and the asyncio API."""

import asyncio
from collections.abc import Callable
from typing import Any

from sandbox_operator_client import (
    AsyncCompletionReports,
    AsyncSandboxClaims,
    AsyncSessionReferences,
    CompletionReports,
    Reported,
    SandboxClaims,
    SessionReferences,
)
from scripted import AsyncScripted, Script, SyncScripted


class Shell:
    """Calls a method of SessionReferences or CompletionReports, blocking or asyncio, on a scripted server."""

    def __init__(self, kind: str, script: Script) -> None:
        self.kind = kind
        self.script = script

    def references(self, method: str, *args: Any, **options: Any) -> Any:
        if self.kind == "sync":
            return getattr(SessionReferences(transport=SyncScripted(self.script)), method)(*args, **options)
        target = AsyncSessionReferences(transport=AsyncScripted(self.script))
        return asyncio.run(getattr(target, method)(*args, **options))

    def claims(self, method: str, *args: Any, **options: Any) -> Any:
        if self.kind == "sync":
            return getattr(SandboxClaims(transport=SyncScripted(self.script)), method)(*args, **options)
        target = AsyncSandboxClaims(transport=AsyncScripted(self.script))
        return asyncio.run(getattr(target, method)(*args, **options))

    def reports(self, method: str, *args: Any, deliver: Callable[[Reported], None] | None = None) -> Any:
        if self.kind == "sync":
            target = CompletionReports(transport=SyncScripted(self.script))
            return getattr(target, method)(*args, *([deliver] if deliver else []))
        async_target = AsyncCompletionReports(transport=AsyncScripted(self.script))

        async def delivering(report: Reported) -> None:
            assert deliver is not None
            deliver(report)

        return asyncio.run(getattr(async_target, method)(*args, *([delivering] if deliver else [])))
