/** detach, forget and the worktree prune: tombstones block, forget never throws, prune spares a re-attach. */
import { expect } from 'vitest';
import { EXCLUSIVITY_FINALIZER } from '../../../../operator/api/names.ts';
import { sessionReferenceName } from '../../../../operator/client/names.ts';
import {
  createSandbox,
  deleteSandbox,
  getReference,
  sandboxGone,
  untilSandbox,
} from '../../controller/fixtures.ts';
import { pathOf, type Scenario } from '../context.ts';
import { attachArgs } from './helpers.ts';

export const lifecycle: readonly Scenario[] = [
  {
    name: 'a tombstone still blocks a deletion; forgetting it lets the deletion finish by itself',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('tombstone');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1' });
      const host = context.host();
      await host.ok('attach', attachArgs(namespace, sandbox, 'workspace_f'));
      await host.ok('detach', { namespace, sandbox, session: 'workspace_f' });
      // A deletion the operator holds: one that meets the Sandbox before its finalizer removes it at once.
      await untilSandbox(namespace, sandbox, 'taken in', (s) =>
        (s.metadata.finalizers ?? []).includes(EXCLUSIVITY_FINALIZER),
      );
      await deleteSandbox(namespace, sandbox);
      await untilSandbox(namespace, sandbox, 'blocked', (s) => s.status?.phase === 'Blocked');
      const args = { namespace, sandbox, session: 'workspace_f', deadlineMs: 2_000 };
      expect(await host.ok('forget', args)).toEqual({ kind: 'Forgotten' });
      expect(await host.ok('forget', args)).toEqual({ kind: 'AlreadyGone' });
      await sandboxGone(namespace, sandbox, 60_000);
    },
  },
  {
    name: 'forget past its deadline returns Failed in time, never throws',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('forget-late');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1' });
      const host = context.host();
      await host.ok('attach', attachArgs(namespace, sandbox, 'workspace_x'));
      // A DELETE the API server never answers: only the deadline can end the forget. It is never let through.
      const proxy = await context.proxy({
        hold: (method) => (method === 'DELETE' ? new Promise<void>(() => undefined) : undefined),
      });
      const started = Date.now();
      const result = await host.ok<{ kind: string; error?: { message: string } }>(
        'forget',
        { namespace, sandbox, session: 'workspace_x', deadlineMs: 1_000 },
        proxy,
      );
      expect(result.kind).toBe('Failed');
      expect(result.error?.message).toMatch(/forget did not finish within 1(000 ms| s)/);
      expect(Date.now() - started).toBeLessThan(5_000);
      // The reference is still there; a forget that reaches the API server takes it.
      const name = sessionReferenceName(sandbox, 'workspace_x');
      expect(await getReference(namespace, name)).toBeDefined();
      expect(
        await host.ok('forget', { namespace, sandbox, session: 'workspace_x', deadlineMs: 2_000 }),
      ).toEqual({
        kind: 'Forgotten',
      });
    },
  },
  {
    name: 'forget against an API server that cannot be reached returns Failed',
    async run(context) {
      const { namespace } = context;
      const unreachable = await context.proxy({
        hold: () => Promise.reject(new Error('connection torn down')),
      });
      const result = await context
        .host()
        .ok<{ kind: string }>(
          'forget',
          { namespace, sandbox: 'any', session: 'workspace_x', deadlineMs: 1_000 },
          unreachable,
        );
      expect(result.kind).toBe('Failed');
    },
  },
  {
    name: 'prune deletes only the tombstones of its worktree, and keeps one re-attached between its LIST and DELETE',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('prune');
      const worktree = `wt-${context.client.short}`;
      await createSandbox(namespace, sandbox, { worktree: 'wt-1' });
      const host = context.host();
      const attach = (session: string, tree: string) =>
        host.ok('attach', { ...attachArgs(namespace, sandbox, session), worktree: tree });
      await attach('workspace_a', worktree);
      await attach('workspace_b', worktree);
      await attach('workspace_c', `${worktree}-other`);
      await host.ok('detach', { namespace, sandbox, session: 'workspace_a' });
      await host.ok('detach', { namespace, sandbox, session: 'workspace_c' });
      expect(await host.ok('pruneWorktree', { namespace, worktree })).toEqual([
        sessionReferenceName(sandbox, 'workspace_a'),
      ]);
      expect((await getReference(namespace, sessionReferenceName(sandbox, 'workspace_b')))?.spec.state).toBe(
        'Attached',
      );
      expect((await getReference(namespace, sessionReferenceName(sandbox, 'workspace_c')))?.spec.state).toBe(
        'Detached',
      );

      // The race: another host re-attaches the tombstone while the prune's DELETE is held.
      await attach('workspace_r', worktree);
      await host.ok('detach', { namespace, sandbox, session: 'workspace_r' });
      const name = sessionReferenceName(sandbox, 'workspace_r');
      const other = context.host();
      const proxy = await context.proxy({
        hold: (method, url) =>
          method === 'DELETE' && pathOf(url).endsWith(`/${name}`)
            ? other
                .ok('attach', { ...attachArgs(namespace, sandbox, 'workspace_r'), worktree })
                .then(() => undefined)
            : undefined,
      });
      expect(await host.ok('pruneWorktree', { namespace, worktree }, proxy)).toEqual([]);
      expect((await getReference(namespace, name))?.spec.state).toBe('Attached');
    },
  },
  {
    name: 'every request names the client in its User-Agent, never the operator',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('user-agent');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1' });
      const agents = new Set<string>();
      const proxy = await context.proxy({
        hold: (_method, _url, headers) => void agents.add(String(headers['user-agent'])),
      });
      const host = context.host();
      await host.ok('attach', attachArgs(namespace, sandbox, 'workspace_u'), proxy);
      await host.ok('detach', { namespace, sandbox, session: 'workspace_u' }, proxy);
      await host.ok('forget', { namespace, sandbox, session: 'workspace_u', deadlineMs: 2_000 }, proxy);
      expect(agents.size).toBeGreaterThan(0);
      for (const agent of agents) expect(agent).toMatch(/^sandbox-operator-client/);
    },
  },
];
