/**
 * The attach handshake (docs/adr/0003-attach-handshake.md): an attach racing a deletion either blocks it or
 * is refused, in both interleavings, forced by holding the controller at its consistent LIST (the technique
 * of test/integration/controller/attach-race.test.ts); and a refused attach withdraws exactly its own write.
 */
import { expect } from 'vitest';
import { sessionReferenceName } from '../../../../operator/client/names.ts';
import {
  createSandbox,
  deleteSandbox,
  getReference,
  sandboxGone,
  untilSandbox,
} from '../../controller/fixtures.ts';
import { pathOf, type Context, type Scenario } from '../context.ts';
import { releaseHold, HOLD, attachArgs, referenceExists } from './helpers.ts';

const running = async ({ namespace }: Context, sandbox: string) => {
  await createSandbox(namespace, sandbox, { worktree: 'wt-1' });
  await untilSandbox(namespace, sandbox, 'running', (s) => s.status?.phase === 'Running');
};

export const handshake: readonly Scenario[] = [
  {
    name: 'an attach written after the deletion but before its consistent LIST blocks it, then is refused',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('before-list');
      const gate = context.gate(sandbox, 'BeforeList');
      await running(context, sandbox);
      await deleteSandbox(namespace, sandbox);
      await gate.reached; // the cache said exclusive; the controller is about to LIST
      // The attach's live read of the Sandbox is held, so its write lands before the LIST and its read after.
      let releaseRead: () => void = () => undefined;
      const read = new Promise<void>((resolve) => (releaseRead = resolve));
      const proxy = await context.proxy({
        hold: (method, url) =>
          method === 'GET' && pathOf(url).endsWith(`/sandboxes/${sandbox}`) ? read : undefined,
      });
      const attach = context.host().call('attach', attachArgs(namespace, sandbox, 'workspace_77'), proxy);
      await referenceExists(namespace, sessionReferenceName(sandbox, 'workspace_77'));
      gate.open();
      const blocked = await untilSandbox(namespace, sandbox, 'blocked', (s) => s.status?.phase === 'Blocked');
      expect(blocked.status?.decision).toMatchObject({ verdict: 'Foreign', evidence: 'Index' });
      releaseRead();
      // The attach sees the deletion: refused, its reference withdrawn; the deletion then completes.
      expect(await attach).toMatchObject({
        ok: false,
        error: { kind: 'SandboxDeleting', reason: 'Deleting', withdrawal: 'Deleted' },
      });
      await sandboxGone(namespace, sandbox, 60_000);
    },
  },
  {
    name: 'an attach written after the consistent LIST is refused, and the sandbox goes',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('after-list');
      const gate = context.gate(sandbox, 'AfterList');
      await running(context, sandbox);
      await deleteSandbox(namespace, sandbox);
      await gate.reached; // the LIST saw no reference; the release follows
      const refused = await context.host().fails('attach', attachArgs(namespace, sandbox, 'workspace_77'));
      expect(refused).toMatchObject({ kind: 'SandboxDeleting', reason: 'Deleting', withdrawal: 'Deleted' });
      expect(refused.since).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(await getReference(namespace, sessionReferenceName(sandbox, 'workspace_77'))).toBeUndefined();
      gate.open();
      await sandboxGone(namespace, sandbox, 60_000);
    },
  },
  {
    name: 'a re-attach of a tombstone makes it Attached again, under the same name, with the new route',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('reattach');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1' });
      const host = context.host();
      const name = await host.ok('attach', attachArgs(namespace, sandbox, 'workspace_1'));
      expect(name).toBe(sessionReferenceName(sandbox, 'workspace_1'));
      await host.ok('detach', { namespace, sandbox, session: 'workspace_1' });
      const tombstone = await getReference(namespace, sessionReferenceName(sandbox, 'workspace_1'));
      expect(tombstone?.spec.state).toBe('Detached');
      expect(tombstone?.status?.detachedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const again = await host.ok('attach', {
        ...attachArgs(namespace, sandbox, 'workspace_1'),
        route: 'r/again',
      });
      expect(again).toBe(name);
      const reattached = await getReference(namespace, sessionReferenceName(sandbox, 'workspace_1'));
      expect(reattached?.spec).toMatchObject({ state: 'Attached', route: 'r/again' });
    },
  },
  {
    name: 'a refused re-attach restores the tombstone it found, never deletes it',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('restore');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1', finalizers: [HOLD] });
      const host = context.host();
      await host.ok('attach', attachArgs(namespace, sandbox, 'workspace_t'));
      await host.ok('detach', { namespace, sandbox, session: 'workspace_t' });
      await deleteSandbox(namespace, sandbox);
      const refused = await host.fails('attach', {
        ...attachArgs(namespace, sandbox, 'workspace_t'),
        route: 'shared-control-v1/elsewhere',
      });
      expect(refused).toMatchObject({ kind: 'SandboxDeleting', reason: 'Deleting', withdrawal: 'Restored' });
      const tombstone = await getReference(namespace, sessionReferenceName(sandbox, 'workspace_t'));
      expect(tombstone?.spec).toMatchObject({ state: 'Detached', route: 'shared-control-v1/workspace_t' });
      await releaseHold(namespace, sandbox);
    },
  },
  {
    name: 'a refused first attach deletes the reference it created',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('first-refused');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1', finalizers: [HOLD] });
      await deleteSandbox(namespace, sandbox);
      const refused = await context.host().fails('attach', attachArgs(namespace, sandbox, 'workspace_n'));
      expect(refused).toMatchObject({ kind: 'SandboxDeleting', reason: 'Deleting', withdrawal: 'Deleted' });
      expect(await getReference(namespace, sessionReferenceName(sandbox, 'workspace_n'))).toBeUndefined();
      await releaseHold(namespace, sandbox);
    },
  },
  {
    name: 'an attach to a sandbox that does not exist is refused and withdrawn',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('missing');
      const refused = await context.host().fails('attach', attachArgs(namespace, sandbox, 'workspace_m'));
      expect(refused).toMatchObject({
        kind: 'SandboxDeleting',
        reason: 'Gone',
        since: null,
        withdrawal: 'Deleted',
      });
      expect(await getReference(namespace, sessionReferenceName(sandbox, 'workspace_m'))).toBeUndefined();
    },
  },
];
