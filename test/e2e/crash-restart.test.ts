/**
 * The operator process SIGKILLed at each step of a deletion (failpoints), then restarted: the deletion completes
 * after the restart, and a shared sandbox in the same namespace is never destroyed by any of it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LABELS } from '../../operator/api/names.ts';
import { FAILPOINTS } from '../../operator/controller/failpoints.ts';
import { testNamespace } from '../harness/kube.ts';
import {
  createReference,
  createSandbox,
  deleteSandbox,
  getSandbox,
} from '../integration/controller/fixtures.ts';
import { core, eventually } from '../integration/controller/operator.ts';
import { startOperatorProcess, type OperatorProcess } from './operator-process.ts';

const namespace = testNamespace('crash');
const running: OperatorProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((operator) => operator.stop()));
});

const pods = async (sandbox: string) =>
  (await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${sandbox}` })).items;

async function sharedSandboxIntact(): Promise<void> {
  const sandbox = await getSandbox(namespace, 'shared');
  expect(sandbox).toBeDefined();
  const shared = await pods('shared');
  expect(shared).toHaveLength(2);
  for (const pod of shared) expect(pod.metadata?.deletionTimestamp).toBeUndefined();
}

describe('a deletion interrupted by SIGKILL', () => {
  it.each(FAILPOINTS)(
    'resumes after a crash at %s and completes; the shared sandbox survives',
    async (step) => {
      const first = await startOperatorProcess(namespace, { failpoints: [step] });
      running.push(first);
      if ((await getSandbox(namespace, 'shared')) === undefined) {
        await createSandbox(namespace, 'shared', { worktree: 'wt-1', replicas: 2 });
        await createReference(namespace, 'shared-foreign', {
          sandbox: 'shared',
          session: 'workspace_1',
          worktree: 'wt-2',
        });
      }
      const name = `exclusive-${step}`;
      await createSandbox(namespace, name, { worktree: 'wt-1', replicas: 2 });
      await createReference(namespace, `${name}-own`, {
        sandbox: name,
        session: 'workspace_2',
        worktree: 'wt-1',
      });
      await eventually(
        `${name} running`,
        async () => ((await getSandbox(namespace, name))?.status?.phase === 'Running' ? true : undefined),
        60_000,
      );
      await eventually(
        'shared blocked-ready',
        async () =>
          (await getSandbox(namespace, 'shared'))?.status?.references?.foreign === 1 ? true : undefined,
        60_000,
      );

      await deleteSandbox(namespace, 'shared');
      await deleteSandbox(namespace, name);
      expect(await first.exited).toBe('SIGKILL');
      expect(first.output()).toContain(`failpoint ${step}: SIGKILL`);
      await sharedSandboxIntact();

      const second = await startOperatorProcess(namespace);
      running.push(second);
      await eventually(
        `${name} destroyed after restart`,
        async () => ((await getSandbox(namespace, name)) === undefined ? true : undefined),
        60_000,
      );
      expect(await pods(name)).toHaveLength(0);
      await eventually(
        'shared blocked',
        async () => ((await getSandbox(namespace, 'shared'))?.status?.phase === 'Blocked' ? true : undefined),
        60_000,
      );
      await sharedSandboxIntact();
      await second.stop();
    },
  );
});
