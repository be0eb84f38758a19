/** An attach to a suspended sandbox: it resumes it and waits until Ready, or fails at its deadline. */
import { expect } from 'vitest';
import { sessionReferenceName } from '../../../../operator/client/names.ts';
import { createSandbox, getReference, getSandbox, untilSandbox } from '../../controller/fixtures.ts';
import type { Scenario } from '../context.ts';
import { attachArgs } from './helpers.ts';

const SUSPENDED = { workspace: 'Ephemeral', operatingMode: 'Suspended' };

export const suspension: readonly Scenario[] = [
  {
    name: 'an attach resumes a sandbox its spec suspends and returns once it is Ready',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('suspended');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1', suspension: SUSPENDED });
      await untilSandbox(namespace, sandbox, 'suspended', (s) => s.status?.phase === 'Suspended');
      const name = await context
        .host()
        .ok('attach', { ...attachArgs(namespace, sandbox, 'workspace_r'), waitReadyMs: 60_000 });
      expect(name).toBe(sessionReferenceName(sandbox, 'workspace_r'));
      const ready = await getSandbox(namespace, sandbox);
      expect(ready?.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
    },
  },
  {
    name: 'an attach that may not resume waits until its deadline and fails, the session still attached',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('asleep');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1', suspension: SUSPENDED });
      await untilSandbox(namespace, sandbox, 'suspended', (s) => s.status?.phase === 'Suspended');
      const refused = await context.host().fails('attach', {
        ...attachArgs(namespace, sandbox, 'workspace_s'),
        resume: false,
        waitReadyMs: 1_000,
      });
      expect(refused).toMatchObject({
        kind: 'SandboxNotReady',
        reason: 'Deadline',
        seen: 'phase Suspended, Ready Suspended',
      });
      const reference = await getReference(namespace, sessionReferenceName(sandbox, 'workspace_s'));
      expect(reference?.spec.state).toBe('Attached');
    },
  },
];
