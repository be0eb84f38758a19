/**
 * A minimal agent host: how platform code records that its sessions use a shared sandbox, through the
 * package `@sandbox-operator/client` (clients/typescript). One session attaches (the fence check included), a
 * subagent it delegates to attaches beside it, the subagent's work ends (detach: a tombstone), the worktree is
 * done (prune), and the root session ends (forget). docs/client.md describes each call, its guarantees and its
 * errors.
 *
 *   KUBECONFIG=… node agent-host.ts <namespace> <sandbox> <worktree>   # in a project that installed the package
 *   KUBECONFIG=… node examples/agent-host/agent-host.ts …              # in the repository, after
 *                                                                      # npm run build --workspace @sandbox-operator/client
 *
 * Node.js >= 24 runs this TypeScript file as it is. Exit codes: 0 done, 3 the sandbox is being deleted
 * (or gone), so no session may start in it; 1 any other failure.
 */
import {
  KubeConfig,
  KubeRequestError,
  SandboxDeletingError,
  SessionReferences,
  type AttachRequest,
} from '@sandbox-operator/client';

const [namespace, sandbox, worktree] = process.argv.slice(2);
if (namespace === undefined || sandbox === undefined || worktree === undefined) {
  process.stderr.write('usage: agent-host.ts <namespace> <sandbox> <worktree>\n');
  process.exit(2);
}

const kubeconfig = new KubeConfig();
kubeconfig.loadFromDefault(); // KUBECONFIG, else ~/.kube/config, else the pod's service account
const references = new SessionReferences(kubeconfig);

const root: AttachRequest = {
  namespace,
  sandbox,
  session: 'workspace_1',
  worktree,
  route: `agent-host-example/${worktree}/workspace_1`,
  role: 'Root',
};
const subagent: AttachRequest = {
  ...root,
  session: 'workspace_2',
  route: `agent-host-example/${worktree}/workspace_2`,
  role: 'Subagent',
  parentSession: root.session,
};

try {
  // attach: only once it returns may the session run in the sandbox.
  const rootName = await references.attach(root);
  console.log(`attached ${root.session} to ${namespace}/${sandbox} as SessionReference ${rootName}`);
  const subagentName = await references.attach(subagent);
  console.log(
    `attached ${subagent.session} (subagent of ${root.session}) as SessionReference ${subagentName}`,
  );

  // detach: the subagent is done; its reference stays as a tombstone that still protects the sandbox.
  await references.detach(namespace, sandbox, subagent.session);
  console.log(`detached ${subagent.session}`);

  // pruneWorktree: the worktree's work is finished; its tombstones may go.
  const pruned = await references.pruneWorktree(namespace, worktree);
  console.log(
    `pruned ${pruned.length} tombstone(s) of worktree ${worktree}: ${pruned.join(', ') || '(none)'}`,
  );

  // forget: the session is deleted; forget never throws and is bounded by its deadline.
  const forgotten = await references.forget(namespace, sandbox, root.session);
  if (forgotten.kind === 'Failed')
    console.error(`forget ${root.session} failed (retry later):`, forgotten.error);
  else console.log(`forgot ${root.session}: ${forgotten.kind}`);
} catch (error) {
  if (error instanceof SandboxDeletingError) {
    // The fence: the sandbox is being deleted (or gone); the attach was withdrawn. Pick another sandbox.
    console.error(`refused: ${error.message}`);
    process.exit(3);
  }
  if (error instanceof KubeRequestError)
    console.error(`API request failed (HTTP ${error.status ?? '?'}): ${error.message}`);
  else console.error(error);
  process.exit(1);
}
