"""Names derived from the domain's identifiers, byte for byte as the TypeScript client derives them
(test/conformance/vectors/names.json): hosts in both languages must find the same objects."""

import hashlib

from ._vocabulary import REPORTED_ANNOTATION_PREFIX


def _sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def session_reference_name(sandbox: str, session: str) -> str:
    """The one SessionReference of (sandbox, session): a second attach finds the first.

    The first 40 characters of the sandbox's name: Sandbox names are DNS labels (ASCII), where Python's
    code points and JavaScript's UTF-16 units count alike.
    """
    digest = _sha256_hex(sandbox + "\n" + session)[:16]
    return f"{sandbox[:40]}-{digest}"


def reported_annotation(delegation_id: str) -> str:
    """The annotation on a child's reference that records the last turn reported for a delegation."""
    return REPORTED_ANNOTATION_PREFIX + _sha256_hex(delegation_id)[:40]


def report_key(delegation: str, turn_id: str) -> str:
    """The dedupe key of a report: one per (delegation, turn)."""
    return f"resume:{delegation}:{turn_id}:answer"
