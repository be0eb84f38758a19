"""The attach's fence judgement (docs/adr/0003-attach-handshake.md), pure; the same rules as the TypeScript
client's operator/client/fence.ts, held to the same cases (test/conformance/vectors/fence.json).

It reads exactly the fields the fence lives in, metadata.deletionTimestamp and the cleanup-fence annotation,
from the raw answer: a status value a newer operator wrote cannot hide a deletion, and cannot refuse an attach
to a live sandbox either. When those fields cannot be read, the Sandbox is treated as deleting: an attach
refused wrongly costs a retry elsewhere, one accepted wrongly can cost the workspace.
"""

from dataclasses import dataclass
from typing import Literal

from ._json import child, is_object
from ._vocabulary import CLEANUP_FENCE_ANNOTATION


@dataclass(frozen=True)
class SandboxRead:
    """What the live read of the Sandbox answered: gone (404), a success that is not JSON, or JSON."""

    kind: Literal["Gone", "NotJson", "Json"]
    body: object = None


FenceKind = Literal["Open", "Deleting", "CleanupFenced", "Gone", "Unreadable"]


@dataclass(frozen=True)
class FenceJudgement:
    kind: FenceKind
    #: When the fence went up (Deleting: the deletionTimestamp; CleanupFenced: the annotation's value).
    since: str | None = None
    #: Unreadable: which field could not be read.
    problem: str | None = None


def _unreadable(problem: str) -> FenceJudgement:
    return FenceJudgement("Unreadable", problem=problem)


def judge_fence(read: SandboxRead) -> FenceJudgement:
    if read.kind == "Gone":
        return FenceJudgement("Gone")
    if read.kind == "NotJson":
        return _unreadable("the answer is not JSON")
    if not is_object(read.body):
        return _unreadable("the answer is not an object")
    metadata = read.body.get("metadata")
    if not is_object(metadata):
        return _unreadable("metadata is not an object")
    deletion = metadata.get("deletionTimestamp")
    if deletion is not None:
        if not isinstance(deletion, str):
            return _unreadable("metadata.deletionTimestamp is not a string")
        return FenceJudgement("Deleting", since=deletion)
    annotations = metadata.get("annotations")
    if annotations is None:
        return FenceJudgement("Open")
    if not is_object(annotations):
        return _unreadable("metadata.annotations is not a map")
    fence = child(annotations, CLEANUP_FENCE_ANNOTATION)
    if fence is None:
        return FenceJudgement("Open")
    if not isinstance(fence, str):
        return _unreadable(f"annotation {CLEANUP_FENCE_ANNOTATION} is not a string")
    return FenceJudgement("CleanupFenced", since=fence)
