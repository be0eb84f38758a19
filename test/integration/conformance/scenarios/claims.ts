/**
 * claim(): a session gets a sandbox bound by the operator, with its reference from the bind, and gives it up by
 * release(); a claim that cannot be bound fails at its deadline saying why (docs/warm-pools.md, "Claims").
 */
import { expect } from 'vitest';
import { API_VERSION, GROUP, VERSION } from '../../../../operator/api/names.ts';
import { sessionReferenceName } from '../../../../operator/client/names.ts';
import { getReference, sandboxGone, sandboxManifest } from '../../controller/fixtures.ts';
import { customObjects } from '../../controller/operator.ts';
import type { Scenario } from '../context.ts';

type Claimed = { claim: string; sandbox: string; reference: string; launchType: string };

async function template(namespace: string, name: string) {
  await customObjects().createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: 'sandboxtemplates',
    body: {
      apiVersion: API_VERSION,
      kind: 'SandboxTemplate',
      metadata: { name, namespace },
      spec: sandboxManifest(namespace, name).spec,
    },
  });
}

const claimArgs = (namespace: string, name: string, session: string) => ({
  namespace,
  name,
  session,
  worktree: 'wt-9',
  route: `shared-control-v1/${session}`,
  role: 'Root',
});

export const claims: readonly Scenario[] = [
  {
    name: 'a claim returns its bound sandbox and the reference the binding wrote; release gives it up',
    async run(context) {
      const { namespace } = context;
      const name = context.name('claimed');
      await template(namespace, name);
      const host = context.host();
      const claimed = await host.ok<Claimed>('claim', {
        ...claimArgs(namespace, name, 'workspace_c'),
        templateRef: { name },
        deadlineMs: 60_000,
      });
      expect(claimed).toMatchObject({ claim: name, launchType: 'Cold' });
      expect(claimed.reference).toBe(sessionReferenceName(claimed.sandbox, 'workspace_c'));
      const reference = await getReference(namespace, claimed.reference);
      expect(reference?.spec).toMatchObject({
        sandbox: claimed.sandbox,
        session: 'workspace_c',
        worktree: 'wt-9',
      });
      expect(await host.ok('releaseClaim', { namespace, claim: name })).toBe('Released');
      await sandboxGone(namespace, claimed.sandbox);
      expect(await getReference(namespace, claimed.reference)).toBeUndefined();
    },
  },
  {
    name: 'a claim of a pool that does not exist fails at its deadline saying why',
    async run(context) {
      const { namespace } = context;
      const name = context.name('unbound');
      const refused = await context.host().fails('claim', {
        ...claimArgs(namespace, name, 'workspace_u'),
        warmPoolRef: { name: 'no-such-pool' },
        deadlineMs: 5_000,
      });
      expect(refused).toMatchObject({ kind: 'SandboxClaimNotReady', reason: 'Deadline' });
      expect(refused.seen).toContain('WarmPoolNotFound');
      expect(await context.host().ok('releaseClaim', { namespace, claim: name })).toBe('Released');
    },
  },
];
