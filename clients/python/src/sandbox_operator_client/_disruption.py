"""The drain notice the operator puts on a session's reference (`status.disruption`, issue 27): a drain is moving
the sandbox's pods to another node, at the latest at `moves_by`. Read leniently, as the TypeScript client's
operator/client/disruption.ts reads it: a notice this version cannot read is reported as none."""

from dataclasses import dataclass

from ._json import child


@dataclass(frozen=True)
class DisruptionNotice:
    #: The nodes being drained that run the sandbox's pods.
    nodes: tuple[str, ...]
    #: When the operator first saw the drain (RFC 3339).
    since: str
    #: The latest the pods move (RFC 3339); sooner once no attached session has a turn Running.
    moves_by: str


def read_disruption(reference: object) -> DisruptionNotice | None:
    """The notice on a stored SessionReference (its JSON, as read); None when there is none."""
    notice = child(child(reference, "status"), "disruption")
    nodes, since, moves_by = child(notice, "nodes"), child(notice, "since"), child(notice, "movesBy")
    if not isinstance(nodes, list) or not nodes or not all(isinstance(node, str) for node in nodes):
        return None
    if not isinstance(since, str) or not isinstance(moves_by, str):
        return None
    return DisruptionNotice(tuple(node for node in nodes if isinstance(node, str)), since, moves_by)
