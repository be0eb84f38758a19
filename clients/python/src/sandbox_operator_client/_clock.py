"""The timestamps the client writes, in the forms the TypeScript client writes them (RFC 3339, UTC, `Z`)."""

from datetime import datetime, timezone


def now_seconds() -> str:
    """status.detachedAt: whole seconds."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_millis() -> str:
    """status.turn.updatedAt: milliseconds, as JavaScript's toISOString()."""
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"
