/**
 * The fence read from the raw Sandbox (issue 25, item 2): a Sandbox the client cannot read is treated as
 * deleting, never as live; a status value a newer operator wrote neither hides a deletion nor refuses a live
 * sandbox; automatic cleanup's fence refuses like a deletion. A fault proxy rewrites the Sandbox as the
 * client's live read sees it.
 */
import { expect } from 'vitest';
import { sessionReferenceName } from '../../../../operator/client/names.ts';
import { createSandbox, deleteSandbox, getReference } from '../../controller/fixtures.ts';
import type { Rewrite } from '../fault-proxy.ts';
import { pathOf, type Context, type Scenario } from '../context.ts';
import { HOLD, attachArgs, releaseHold } from './helpers.ts';

type Body = Record<string, unknown>;
const rewriteSandbox =
  (sandbox: string, change: (body: Body) => unknown): Rewrite =>
  (method, url, body) =>
    method === 'GET' && pathOf(url).endsWith(`/sandboxes/${sandbox}`)
      ? ((text) => (typeof text === 'string' ? text : JSON.stringify(text)))(change(JSON.parse(body) as Body))
      : undefined;
const withMetadata = (body: Body, fields: Body) => ({
  ...body,
  metadata: { ...(body['metadata'] as Body), ...fields },
});
const withPhase = (body: Body, phase: string) => ({
  ...body,
  status: { ...(body['status'] as Body), phase },
});

async function attachThrough(context: Context, sandbox: string, session: string, rewrite: Rewrite) {
  const proxy = await context.proxy({ rewrite });
  return context.host().call('attach', attachArgs(context.namespace, sandbox, session), proxy);
}

export const unreadable: readonly Scenario[] = [
  {
    name: 'a Sandbox the client cannot read is treated as deleting: refused and withdrawn, never attached',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('unreadable');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1' });
      const variants: [string, (body: Body) => unknown, string][] = [
        ['workspace_j', () => '<html>a proxy error page</html>', 'not JSON'],
        ['workspace_t', (body) => withMetadata(body, { deletionTimestamp: 1764658800 }), 'deletionTimestamp'],
        [
          'workspace_a',
          (body) => withMetadata(body, { annotations: ['sandbox.agents.dev/cleanup-fence'] }),
          'annotations',
        ],
      ];
      for (const [session, change, problem] of variants) {
        const answer = await attachThrough(context, sandbox, session, rewriteSandbox(sandbox, change));
        expect(answer, problem).toMatchObject({
          ok: false,
          error: { kind: 'SandboxDeleting', reason: 'Unreadable', withdrawal: 'Deleted' },
        });
        expect('error' in answer && answer.error.message, problem).toContain(problem);
        expect(
          await getReference(namespace, sessionReferenceName(sandbox, session)),
          problem,
        ).toBeUndefined();
      }
    },
  },
  {
    name: 'a status value a newer operator wrote does not open the fence, nor close a live sandbox',
    async run(context) {
      const { namespace } = context;
      const deleting = context.name('newer-deleting');
      await createSandbox(namespace, deleting, { worktree: 'wt-1', finalizers: [HOLD] });
      await deleteSandbox(namespace, deleting);
      const refused = await attachThrough(
        context,
        deleting,
        'workspace_h',
        rewriteSandbox(deleting, (b) => withPhase(b, 'Hibernating')),
      );
      expect(refused).toMatchObject({
        ok: false,
        error: { kind: 'SandboxDeleting', reason: 'Deleting', withdrawal: 'Deleted' },
      });
      expect(await getReference(namespace, sessionReferenceName(deleting, 'workspace_h'))).toBeUndefined();
      await releaseHold(namespace, deleting);

      const live = context.name('newer-live');
      await createSandbox(namespace, live, { worktree: 'wt-1' });
      const attached = await attachThrough(
        context,
        live,
        'workspace_h',
        rewriteSandbox(live, (b) => withPhase(b, 'Hibernating')),
      );
      expect(attached).toMatchObject({ ok: true, value: sessionReferenceName(live, 'workspace_h') });
    },
  },
  {
    name: "automatic cleanup's fence refuses an attach as a deletion does",
    async run(context) {
      const sandbox = context.name('cleanup-fenced');
      await createSandbox(context.namespace, sandbox, { worktree: 'wt-1' });
      const fenced = rewriteSandbox(sandbox, (body) =>
        withMetadata(body, { annotations: { 'sandbox.agents.dev/cleanup-fence': '2026-12-02T07:00:00Z' } }),
      );
      expect(await attachThrough(context, sandbox, 'workspace_c', fenced)).toMatchObject({
        ok: false,
        error: {
          kind: 'SandboxDeleting',
          reason: 'CleanupFenced',
          since: '2026-12-02T07:00:00Z',
          withdrawal: 'Deleted',
        },
      });
    },
  },
];
