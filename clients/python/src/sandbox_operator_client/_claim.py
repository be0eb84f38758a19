"""claim(): a session gets a sandbox from a warm pool (or a template) in one call. The same rules as the
TypeScript client's operator/client/claim-readiness.ts and sandbox-claims.ts, held to the same cases
(test/conformance/vectors/claim.json). The shells create the claim, then watch it until it is bound and Ready
or the deadline passes; what they do with each thing they hear is _claim_watch.py's."""

from dataclasses import dataclass
from typing import Literal

from ._json import child, is_object
from ._paths import sandbox_claim_path, sandbox_claims_path
from ._protocol import GONE, Call, Flow, request, request_unless_gone
from ._vocabulary import API_VERSION, SANDBOX_CLAIM_KIND, Role

LaunchType = Literal["Warm", "Cold"]


@dataclass(frozen=True)
class ClaimRequest:
    """A claim of one sandbox for one session: exactly one of `warm_pool` (a ready pool sandbox, or a cold one
    when the pool has none) and `template` (always cold). The session fields are an attach's (AttachRequest).
    `name` is the claim's; None lets the API server generate one."""

    namespace: str
    session: str
    route: str
    role: Role
    warm_pool: str | None = None
    template: str | None = None
    worktree: str | None = None
    parent_session: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class ClaimResult:
    """The bound claim: delete `claim` (release()) to give the sandbox up."""

    claim: str
    sandbox: str
    reference: str
    launch_type: LaunchType


@dataclass(frozen=True)
class ClaimReadiness:
    kind: Literal["Ready", "Waiting", "Deleting", "Gone"]
    sandbox: str | None = None
    reference: str | None = None
    launch_type: LaunchType | None = None
    #: For Waiting: what the conditions say.
    seen: str | None = None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def judge_claim(body: object, gone: bool = False) -> ClaimReadiness:
    if gone:
        return ClaimReadiness("Gone")
    if child(child(body, "metadata"), "deletionTimestamp") is not None:
        return ClaimReadiness("Deleting")
    status = child(body, "status")
    raw = child(status, "conditions")
    conditions = [c for c in raw if is_object(c)] if isinstance(raw, list) else []

    def condition(kind: str) -> dict[str, object] | None:
        return next((c for c in conditions if c.get("type") == kind), None)

    sandbox, reference = _text(child(status, "sandbox")), _text(child(status, "reference"))
    raw_launch = child(status, "launchType")
    launch: LaunchType | None = "Warm" if raw_launch == "Warm" else "Cold" if raw_launch == "Cold" else None
    ready = condition("Ready")
    if (
        sandbox is not None
        and reference is not None
        and launch is not None
        and ready is not None
        and ready.get("status") == "True"
    ):
        return ClaimReadiness("Ready", sandbox, reference, launch)
    said = []
    for kind in ("Bound", "Ready"):
        found = condition(kind)
        if found is None:
            continue
        message = _text(found.get("message"))
        said.append(
            f"{kind} {_text(found.get('status')) or '?'} {_text(found.get('reason')) or ''}"
            + (f": {message}" if message else "")
        )
    return ClaimReadiness("Waiting", seen="; ".join(said) if said else "no conditions yet")


def _spec(req: ClaimRequest) -> dict[str, object]:
    if (req.warm_pool is None) == (req.template is None):
        raise ValueError("a claim names exactly one of warm_pool (a warm claim) and template (a cold one)")
    spec: dict[str, object] = {"session": req.session, "route": req.route, "role": req.role}
    if req.warm_pool is not None:
        spec["warmPoolRef"] = {"name": req.warm_pool}
    if req.template is not None:
        spec["templateRef"] = {"name": req.template}
    if req.worktree is not None:
        spec["worktree"] = req.worktree
    if req.parent_session is not None:
        spec["parentSession"] = req.parent_session
    return spec


def create(req: ClaimRequest) -> Flow[tuple[str, object]]:
    """Creates the claim as the caller; returns its name and the create's answer (its version is where the
    watch starts)."""
    metadata: dict[str, object] = (
        {"generateName": "claim-", "namespace": req.namespace}
        if req.name is None
        else {"name": req.name, "namespace": req.namespace}
    )
    body = {"apiVersion": API_VERSION, "kind": SANDBOX_CLAIM_KIND, "metadata": metadata, "spec": _spec(req)}
    target = f"sandboxclaim {req.namespace}/{req.name or '(generated)'}"
    created = yield from request(
        Call("Create", target, "POST", sandbox_claims_path(req.namespace), body=body)
    )
    name = child(child(created, "metadata"), "name")
    return (name if isinstance(name, str) else (req.name or "")), created


def read(namespace: str, claim: str) -> Flow[tuple[object, bool]]:
    """One read of the claim: its body, and whether it is gone (404)."""
    call = Call("Get", f"sandboxclaim {namespace}/{claim}", "GET", sandbox_claim_path(namespace, claim))
    body = yield from request_unless_gone(call)
    return (None, True) if body is GONE else (body, False)


def release(namespace: str, claim: str) -> Flow[Literal["Released", "AlreadyGone"]]:
    """Deletes the claim: the operator forgets its reference and deletes its sandbox by the ordinary decision."""
    call = Call("Delete", f"sandboxclaim {namespace}/{claim}", "DELETE", sandbox_claim_path(namespace, claim))
    deleted = yield from request_unless_gone(call)
    return "AlreadyGone" if deleted is GONE else "Released"
