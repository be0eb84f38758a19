"""A minimal agent host in Python: how platform code records that its sessions use a shared sandbox, through
`sandbox_operator_client`. One session attaches (the fence check included), a subagent it delegates to
attaches beside it, the subagent's work ends (detach: a tombstone), the worktree is done (prune), and the
root session ends (forget). docs/client.md describes each call, its guarantees and its errors.

    KUBECONFIG=... python agent_host.py <namespace> <sandbox> <worktree> [--asyncio]

The same steps run on the blocking API, or with --asyncio on the asyncio one. Exit codes: 0 done, 3 the
sandbox is being deleted (or gone), so no session may start in it; 1 any other failure.
"""

import asyncio
import sys

from sandbox_operator_client import (
    AsyncSessionReferences,
    AttachRequest,
    ForgetFailed,
    ForgetResult,
    KubeRequestError,
    SandboxDeletingError,
    SessionReferences,
    load_async_api_client,
)


def requests(namespace: str, sandbox: str, worktree: str) -> tuple[AttachRequest, AttachRequest]:
    root = AttachRequest(
        namespace=namespace,
        sandbox=sandbox,
        session="workspace_1",
        worktree=worktree,
        route=f"agent-host-example/{worktree}/workspace_1",
        role="Root",
    )
    subagent = AttachRequest(
        namespace=namespace,
        sandbox=sandbox,
        session="workspace_2",
        worktree=worktree,
        route=f"agent-host-example/{worktree}/workspace_2",
        role="Subagent",
        parent_session=root.session,
    )
    return root, subagent


def said_forget(session: str, forgotten: ForgetResult) -> None:
    # forget never raises and is bounded by its deadline: a failure is a value to retry later.
    if isinstance(forgotten, ForgetFailed):
        print(f"forget {session} failed (retry later): {forgotten.error}", file=sys.stderr)
    else:
        print(f"forgot {session}: {forgotten.kind}")


def blocking(namespace: str, sandbox: str, worktree: str) -> None:
    references = SessionReferences()  # KUBECONFIG, else ~/.kube/config, else the pod's service account
    root, subagent = requests(namespace, sandbox, worktree)
    # attach: only once it returns may the session run in the sandbox.
    print(f"attached {root.session} to {namespace}/{sandbox} as SessionReference {references.attach(root)}")
    name = references.attach(subagent)
    print(f"attached {subagent.session} (subagent of {root.session}) as SessionReference {name}")
    # detach: the subagent is done; its reference stays as a tombstone that still protects the sandbox.
    references.detach(namespace, sandbox, subagent.session)
    print(f"detached {subagent.session}")
    # prune_worktree: the worktree's work is finished; its tombstones may go.
    pruned = references.prune_worktree(namespace, worktree)
    print(f"pruned {len(pruned)} tombstone(s) of worktree {worktree}: {', '.join(pruned) or '(none)'}")
    said_forget(root.session, references.forget(namespace, sandbox, root.session))


async def with_asyncio(namespace: str, sandbox: str, worktree: str) -> None:
    async with await load_async_api_client() as api:
        references = AsyncSessionReferences(api)
        root, subagent = requests(namespace, sandbox, worktree)
        name = await references.attach(root)
        print(f"attached {root.session} to {namespace}/{sandbox} as SessionReference {name}")
        name = await references.attach(subagent)
        print(f"attached {subagent.session} (subagent of {root.session}) as SessionReference {name}")
        await references.detach(namespace, sandbox, subagent.session)
        print(f"detached {subagent.session}")
        pruned = await references.prune_worktree(namespace, worktree)
        print(f"pruned {len(pruned)} tombstone(s) of worktree {worktree}: {', '.join(pruned) or '(none)'}")
        said_forget(root.session, await references.forget(namespace, sandbox, root.session))


def main(argv: list[str]) -> int:
    positional = [arg for arg in argv if not arg.startswith("--")]
    if len(positional) != 3:
        print("usage: agent_host.py <namespace> <sandbox> <worktree> [--asyncio]", file=sys.stderr)
        return 2
    namespace, sandbox, worktree = positional
    try:
        if "--asyncio" in argv:
            asyncio.run(with_asyncio(namespace, sandbox, worktree))
        else:
            blocking(namespace, sandbox, worktree)
    except SandboxDeletingError as error:
        # The fence: the sandbox is being deleted (or gone); the attach was withdrawn. Pick another sandbox.
        print(f"refused: {error}", file=sys.stderr)
        return 3
    except KubeRequestError as error:
        print(f"API request failed (HTTP {error.status or '?'}): {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
