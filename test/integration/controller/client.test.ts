/**
 * The platform-side client against the real API server: detach leaves a tombstone that still blocks, forget
 * deletes within its deadline and reports failure as a value, the worktree prune takes only that worktree's
 * tombstones, and a re-attach of a tombstone makes it Attached again.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionReferenceName } from '../../../operator/client/names.ts';
import { SessionReferences } from '../../../operator/client/session-references.ts';
import {
  EXCLUSIVITY_FINALIZER,
  GROUP,
  SANDBOX,
  SESSION_REFERENCE,
  VERSION,
} from '../../../operator/api/names.ts';
import type { SessionReference } from '../../../operator/api/objects.ts';
import { kubeConfig, testNamespace } from '../../harness/kube.ts';
import { startHoldingProxy } from '../../harness/holding-proxy.ts';
import { startFaultProxy, type Rewrite } from '../conformance/fault-proxy.ts';
import { releaseHold as releaseHeld } from '../conformance/scenarios/helpers.ts';
import { createSandbox, deleteSandbox, getReference, untilSandbox, sandboxGone } from './fixtures.ts';
import { customObjects, grantOperatorRbac, startOperator, type RunningOperator } from './operator.ts';

const namespace = testNamespace('client');
let operator: RunningOperator;
const client = () => new SessionReferences(kubeConfig());
const attach = (sandbox: string, session: string, worktree: string) =>
  client().attach({
    namespace,
    sandbox,
    session,
    worktree,
    route: `shared-control-v1/${session}`,
    role: 'Root',
  });
const readReference = async (sandbox: string, session: string) =>
  (await customObjects().getNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SESSION_REFERENCE.plural,
    name: sessionReferenceName(sandbox, session),
  })) as SessionReference;

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
});
afterAll(async () => {
  await operator.stop();
});

const releaseHold = (sandbox: string) => releaseHeld(namespace, sandbox);

describe('the session reference client', () => {
  it('detaches into a tombstone that still blocks, and re-attaches it', async () => {
    await createSandbox(namespace, 'detach', { worktree: 'wt-1' });
    await attach('detach', 'workspace_1', 'wt-2');
    await client().detach(namespace, 'detach', 'workspace_1');
    const tombstone = await readReference('detach', 'workspace_1');
    expect(tombstone.spec.state).toBe('Detached');
    expect(tombstone.status?.detachedAt).toMatch(/Z$/);
    await untilSandbox(
      namespace,
      'detach',
      'tombstone counted',
      (sandbox) => sandbox.status?.references?.detached === 1,
    );
    await attach('detach', 'workspace_1', 'wt-2');
    expect((await readReference('detach', 'workspace_1')).spec.state).toBe('Attached');
  });

  it('prunes only the detached references of the pruned worktree', async () => {
    await createSandbox(namespace, 'prune', { worktree: 'wt-1' });
    await attach('prune', 'workspace_a', 'wt-9');
    await attach('prune', 'workspace_b', 'wt-9');
    await attach('prune', 'workspace_c', 'wt-8');
    await client().detach(namespace, 'prune', 'workspace_a');
    await client().detach(namespace, 'prune', 'workspace_c');
    expect(await client().pruneWorktree(namespace, 'wt-9')).toEqual([
      sessionReferenceName('prune', 'workspace_a'),
    ]);
    expect((await readReference('prune', 'workspace_b')).spec.state).toBe('Attached');
    expect((await readReference('prune', 'workspace_c')).spec.state).toBe('Detached');
  });

  it('a refused re-attach restores the tombstone it found, never deletes it', async () => {
    // Held by a finalizer of the test's own, so the deletion stays visible without the operator deciding.
    await createSandbox(namespace, 'reattach-refused', {
      worktree: 'wt-1',
      finalizers: ['test.sandbox.agents.dev/hold'],
    });
    await attach('reattach-refused', 'workspace_t', 'wt-2');
    await client().detach(namespace, 'reattach-refused', 'workspace_t');
    await deleteSandbox(namespace, 'reattach-refused');
    const refused = client().attach({
      namespace,
      sandbox: 'reattach-refused',
      session: 'workspace_t',
      worktree: 'wt-2',
      route: 'shared-control-v1/elsewhere',
      role: 'Root',
    });
    await expect(refused).rejects.toMatchObject({ kind: 'SandboxDeleting', withdrawal: 'Restored' });
    const tombstone = await readReference('reattach-refused', 'workspace_t');
    expect(tombstone.spec).toMatchObject({ state: 'Detached', route: 'shared-control-v1/workspace_t' });
    await releaseHold('reattach-refused');
  });

  it('a refused first attach deletes the reference it created', async () => {
    await createSandbox(namespace, 'attach-refused', {
      worktree: 'wt-1',
      finalizers: ['test.sandbox.agents.dev/hold'],
    });
    await deleteSandbox(namespace, 'attach-refused');
    await expect(attach('attach-refused', 'workspace_n', 'wt-2')).rejects.toMatchObject({
      withdrawal: 'Deleted',
    });
    expect(
      await getReference(namespace, sessionReferenceName('attach-refused', 'workspace_n')),
    ).toBeUndefined();
    await releaseHold('attach-refused');
  });

  it('prune keeps a tombstone re-attached between its LIST and its DELETE', async () => {
    await createSandbox(namespace, 'prune-race', { worktree: 'wt-1' });
    await attach('prune-race', 'workspace_r', 'wt-7');
    await client().detach(namespace, 'prune-race', 'workspace_r');
    const name = sessionReferenceName('prune-race', 'workspace_r');
    // Hold the prune's DELETE until the session has attached again.
    const proxy = await startHoldingProxy(kubeConfig(), (method, url) =>
      method === 'DELETE' && url.includes(`/${name}`)
        ? attach('prune-race', 'workspace_r', 'wt-7').then(() => undefined)
        : undefined,
    );
    try {
      expect(await new SessionReferences(proxy.kubeConfig).pruneWorktree(namespace, 'wt-7')).toEqual([]);
    } finally {
      await proxy.close();
    }
    expect((await readReference('prune-race', 'workspace_r')).spec.state).toBe('Attached');
  });

  it('forgets a reference, and the blocked deletion then completes by itself', async () => {
    await createSandbox(namespace, 'forget', { worktree: 'wt-1' });
    await attach('forget', 'workspace_f', 'wt-2');
    // The deletion this test blocks is one the operator holds: a delete that meets the Sandbox before its
    // finalizer (the operator's first turn, or a race with that PATCH) removes it at once, pods left behind.
    await untilSandbox(namespace, 'forget', 'taken in', (sandbox) =>
      (sandbox.metadata.finalizers ?? []).includes(EXCLUSIVITY_FINALIZER),
    );
    await deleteSandbox(namespace, 'forget');
    await untilSandbox(namespace, 'forget', 'blocked', (sandbox) => sandbox.status?.phase === 'Blocked');
    expect(await client().forget(namespace, 'forget', 'workspace_f')).toEqual({ kind: 'Forgotten' });
    expect(await client().forget(namespace, 'forget', 'workspace_f')).toEqual({ kind: 'AlreadyGone' });
    await sandboxGone(namespace, 'forget');
  });

  it('reports a forget it could not finish as a value within its deadline, never by throwing', async () => {
    const unreachable = new KubeConfig();
    unreachable.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u', token: 'x' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const refused = await new SessionReferences(unreachable).forget(namespace, 'any', 'workspace_x', 1_000);
    expect(refused.kind).toBe('Failed');

    // A DELETE the API server never answers: only the deadline can end the forget, and it says so.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const proxy = await startHoldingProxy(kubeConfig(), (method) => (method === 'DELETE' ? held : undefined));
    try {
      const result = await new SessionReferences(proxy.kubeConfig).forget(
        namespace,
        'any',
        'workspace_x',
        1_000,
      );
      expect(result).toMatchObject({
        kind: 'Failed',
        error: { message: 'forget did not finish within 1000 ms' },
      });
    } finally {
      release();
      await proxy.close();
    }
  });

  it('refuses an attach to a deleting Sandbox whose status it does not know (a newer operator wrote it)', async () => {
    await createSandbox(namespace, 'newer-status', {
      worktree: 'wt-1',
      finalizers: ['test.sandbox.agents.dev/hold'],
    });
    await deleteSandbox(namespace, 'newer-status');
    // A phase this client's schema does not know: the fence (the deletionTimestamp) is still up.
    const refused = attachThrough(
      'newer-status',
      'workspace_s',
      rewriteSandbox('newer-status', (sandbox) => ({
        ...sandbox,
        status: { ...(sandbox['status'] as object), phase: 'Hibernating' },
      })),
    );
    await expect(refused).rejects.toMatchObject({ kind: 'SandboxDeleting', withdrawal: 'Deleted' });
    expect(
      await getReference(namespace, sessionReferenceName('newer-status', 'workspace_s')),
    ).toBeUndefined();
    await releaseHold('newer-status');
  });

  it('treats a Sandbox it cannot read as deleting: refused and withdrawn, never attached', async () => {
    await createSandbox(namespace, 'unreadable', { worktree: 'wt-1' });
    // The fence's own fields are unreadable: annotations that are not a map.
    const refused = attachThrough(
      'unreadable',
      'workspace_u',
      rewriteSandbox('unreadable', (sandbox) => ({
        ...sandbox,
        metadata: { ...(sandbox['metadata'] as object), annotations: ['cleanup-fence'] },
      })),
    );
    await expect(refused).rejects.toMatchObject({ kind: 'SandboxDeleting', withdrawal: 'Deleted' });
    expect(await getReference(namespace, sessionReferenceName('unreadable', 'workspace_u'))).toBeUndefined();
  });

  it('names the host in its User-Agent when told, and itself otherwise, never the operator', async () => {
    await createSandbox(namespace, 'user-agent', { worktree: 'wt-1' });
    const directory = await mkdtemp(join(tmpdir(), 'client-proxy-'));
    const agents: string[] = [];
    const proxy = await startFaultProxy(kubeConfig(), directory, () => ({
      hold: (_method, _url, headers) => void agents.push(String(headers['user-agent'])),
    }));
    try {
      const config = new KubeConfig();
      config.loadFromFile(proxy.kubeconfigPath);
      const request = {
        namespace,
        sandbox: 'user-agent',
        worktree: 'wt-2',
        route: 'r',
        role: 'Root' as const,
      };
      await new SessionReferences(config, { userAgent: 'my-platform/1.4' }).attach({
        ...request,
        session: 'workspace_1',
      });
      expect(new Set(agents)).toEqual(new Set(['my-platform/1.4']));
      agents.length = 0;
      await new SessionReferences(config).attach({ ...request, session: 'workspace_2' });
      expect(new Set(agents)).toEqual(new Set(['sandbox-operator-client']));
    } finally {
      await proxy.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});

/** Rewrites the Sandbox `name` as a GET answers it; every other answer passes unchanged. */
const rewriteSandbox =
  (name: string, change: (sandbox: Record<string, unknown>) => unknown): Rewrite =>
  (method, url, body) =>
    method === 'GET' && new URL(url, 'http://x').pathname.endsWith(`/${SANDBOX.plural}/${name}`)
      ? JSON.stringify(change(JSON.parse(body) as Record<string, unknown>))
      : undefined;

/** Attaches through a proxy that answers the Sandbox read as `rewrite` says. */
async function attachThrough(sandbox: string, session: string, rewrite: Rewrite): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'client-proxy-'));
  const proxy = await startFaultProxy(kubeConfig(), directory, () => ({ rewrite }));
  try {
    const config = new KubeConfig();
    config.loadFromFile(proxy.kubeconfigPath);
    return await new SessionReferences(config).attach({
      namespace,
      sandbox,
      session,
      worktree: 'wt-2',
      route: `shared-control-v1/${session}`,
      role: 'Root',
    });
  } finally {
    await proxy.close();
    await rm(directory, { recursive: true, force: true });
  }
}
