"""What claim() does with each thing it hears about its one SandboxClaim, pure: the answer of its create or of
a read, each event of its watch (fieldSelector metadata.name=<claim>) and how each watch ended. The same
decisions as the TypeScript client's operator/client/claim-watch.ts, held to the same cases
(test/conformance/vectors/claim-watch.json); the shells only do the I/O and keep the deadline.

- It watches from the version it last saw the claim at (the create's answer first), so no change between
  the create and the watch, nor between two watches, is missed.
- A watch that ends (the server's timeout) is opened again from that version; one that lost its connection
  too. One the server expired (410 Gone) or failed (429, 5xx, an ERROR event) is replaced by a read of the
  claim and a watch from the version read: the old version may no longer mean anything. Watches that keep
  ending without an event are opened again after growing pauses (0, then 100 ms doubling to 1 s).
- Any other refusal of the watch (400, 401, 403, 404, ...) is the caller's to fix: no retry makes it pass."""

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from ._claim import LaunchType, judge_claim
from ._errors import ApiAnswerError, KubeRequestError
from ._json import child, is_object
from ._paths import sandbox_claims_path
from ._protocol import Call, Reply, failure


@dataclass(frozen=True)
class ClaimWatch:
    #: The version to watch from: the last the claim was seen at (its create, a read, an event, a bookmark).
    resource_version: str = ""
    #: What its conditions said last, for the deadline's error.
    seen: str = "not read yet"
    #: Watches in a row that ended without an event, for the pause before the next.
    failures: int = 0


UNSEEN_CLAIM = ClaimWatch()


@dataclass(frozen=True)
class ClaimRead:
    """The create's or a read's answer; `gone` when the read found no claim (404)."""

    body: object = None
    gone: bool = False


@dataclass(frozen=True)
class ClaimEvent:
    type: str
    object: object


@dataclass(frozen=True)
class WatchClosed:
    """The watch ended as a watch ends: the server's timeout, or the client's own stop."""


@dataclass(frozen=True)
class WatchExpired:
    """410 Gone: the version watched from is no longer in the server's window."""


@dataclass(frozen=True)
class WatchFailed:
    """Any other failure: the HTTP status, or None when no answer came (the connection failed)."""

    status: int | None


ClaimHeard = ClaimRead | ClaimEvent | WatchClosed | WatchExpired | WatchFailed


@dataclass(frozen=True)
class ClaimNext:
    """Ready (the binding), Ended (`reason`), Listen (keep reading the open watch), Watch (open one from
    `resource_version` after `after_ms`), Read (read the claim after `after_ms`) or Refused (`status`)."""

    kind: Literal["Ready", "Ended", "Listen", "Watch", "Read", "Refused"]
    sandbox: str | None = None
    reference: str | None = None
    launch_type: LaunchType | None = None
    reason: Literal["Deleting", "Gone"] | None = None
    resource_version: str | None = None
    after_ms: int | None = None
    status: int | None = None


LISTEN = ClaimNext("Listen")
_FIRST_PAUSE_MS = 100
_LONGEST_PAUSE_MS = 1_000


def pause_after(failures: int) -> int:
    """The pause before the next watch or read: none after one watch ended alone, then growing."""
    return 0 if failures <= 1 else min(_LONGEST_PAUSE_MS, _FIRST_PAUSE_MS * 2 ** (failures - 2))


def _version_of(value: object) -> str | None:
    version = child(child(value, "metadata"), "resourceVersion")
    return version if isinstance(version, str) and version != "" else None


def _judged(
    watch: ClaimWatch, body: object, gone: bool, waiting: Callable[[ClaimWatch], ClaimNext]
) -> tuple[ClaimWatch, ClaimNext]:
    judgement = judge_claim(body, gone=gone)
    if judgement.kind == "Ready":
        return watch, ClaimNext(
            "Ready",
            sandbox=judgement.sandbox,
            reference=judgement.reference,
            launch_type=judgement.launch_type,
        )
    if judgement.kind != "Waiting":
        return watch, ClaimNext("Ended", reason=judgement.kind)
    seen = replace(
        watch,
        resource_version=_version_of(body) or watch.resource_version,
        seen=judgement.seen or watch.seen,
    )
    return seen, waiting(seen)


def _counted(watch: ClaimWatch) -> tuple[ClaimWatch, int]:
    """One watch more ended without an event: counted, with the pause it earns before what comes next."""
    failures = watch.failures + 1
    return replace(watch, failures=failures), pause_after(failures)


def _rewatched(watch: ClaimWatch) -> tuple[ClaimWatch, ClaimNext]:
    counted, after = _counted(watch)
    return counted, ClaimNext("Watch", resource_version=counted.resource_version, after_ms=after)


def _reread(watch: ClaimWatch) -> tuple[ClaimWatch, ClaimNext]:
    counted, after = _counted(watch)
    return counted, ClaimNext("Read", after_ms=after)


def _failed(watch: ClaimWatch, status: int | None) -> tuple[ClaimWatch, ClaimNext]:
    """Expired, busy or broken: read again; no answer: watched again; anything else is a refusal."""
    if status is None:
        return _rewatched(watch)
    if status in (410, 429) or status >= 500:
        return _reread(watch)
    return watch, ClaimNext("Refused", status=status)


def _event(watch: ClaimWatch, kind: str, value: object) -> tuple[ClaimWatch, ClaimNext]:
    if kind in ("ADDED", "MODIFIED"):
        return _judged(replace(watch, failures=0), value, False, lambda _: LISTEN)
    if kind == "DELETED":
        return watch, ClaimNext("Ended", reason="Gone")
    if kind == "BOOKMARK":
        version = _version_of(value) or watch.resource_version
        return replace(watch, failures=0, resource_version=version), LISTEN
    if kind == "ERROR":
        # A Status, and the server ends the watch after it: judged by its code, as an answer's status is.
        code = child(value, "code")
        return _failed(watch, code if isinstance(code, int) and not isinstance(code, bool) else 500)
    return watch, LISTEN


def hear(watch: ClaimWatch, heard: ClaimHeard) -> tuple[ClaimWatch, ClaimNext]:
    if isinstance(heard, ClaimRead):
        return _judged(
            watch,
            heard.body,
            heard.gone,
            lambda seen: ClaimNext("Watch", resource_version=seen.resource_version, after_ms=0),
        )
    if isinstance(heard, ClaimEvent):
        return _event(watch, heard.type, heard.object)
    if isinstance(heard, WatchClosed):
        return _rewatched(watch)
    if isinstance(heard, WatchExpired):
        return _failed(watch, 410)
    return _failed(watch, heard.status)


def heard_line(line: str) -> ClaimHeard:
    """One line of a watch's stream: its event; a line that is no event is a failed watch (as TypeScript's)."""
    try:
        event = json.loads(line)
    except ValueError:
        return WatchFailed(None)
    kind = child(event, "type")
    if not is_object(event) or not isinstance(kind, str):
        return WatchFailed(None)
    return ClaimEvent(kind, event.get("object"))


def cause_of(heard: ClaimHeard) -> BaseException | None:
    """What an ERROR event said, as the cause of what follows it (a read, a refusal, the deadline)."""
    if not isinstance(heard, ClaimEvent) or heard.type != "ERROR":
        return None
    code = child(heard.object, "code")
    return ApiAnswerError(code if isinstance(code, int) else 500, json.dumps(heard.object))


def heard_end(reply: Reply) -> ClaimHeard:
    """A watch the server refused or expired (an answer's status), or that failed (no answer)."""
    if reply.status == 410:
        return WatchExpired()
    return WatchFailed(reply.status)


def watch_call(namespace: str, claim: str, resource_version: str, left: float) -> Call:
    """The watch of the one claim from `resource_version`, ended by the server by the deadline (`left`
    seconds, whole, at least one) and bounded by the client to `left`."""
    query = {
        "watch": "true",
        "fieldSelector": f"metadata.name={claim}",
        "resourceVersion": resource_version,
        "allowWatchBookmarks": "true",
        "timeoutSeconds": str(max(1, math.ceil(left))),
    }
    return Call(
        "Watch",
        f"sandboxclaim {namespace}/{claim}",
        "GET",
        sandbox_claims_path(namespace),
        query=query,
        timeout=left,
    )


def refusal(call: Call, status: int, said: Reply | ClaimHeard) -> KubeRequestError:
    """The refusal of a watch: by its answer, or by the ERROR event that said it (its Status the cause)."""
    if isinstance(said, Reply) and said.status is not None:
        return failure(call, said)
    cause = None if isinstance(said, Reply) else cause_of(said)
    return KubeRequestError(call.step, call.target, status, cause or ApiAnswerError(status, ""))
