/**
 * The operator process SIGKILLed after each write step of a deletion (the failpoints are the step names, so a
 * new step is in this test by construction), then restarted: the deletion completes after the restart, and a
 * shared sandbox in the same namespace is never destroyed by any of it.
 *
 * The exclusive sandbox carries one of its own worktree's tombstones, so its deletion prunes; for the claim
 * steps it has a persistent workspace, whose claim the release deletes after its pods. For the `erase`
 * step it also carries a foreign reference: its deletion blocks until an administrator erases the index.
 * Each step starts from a fresh shared sandbox: the previous one is released at the end of its step (its
 * foreign reference forgotten), so a blocked deletion left over never trips the next step's failpoint first.
 *
 * For the `erase-late` step a late reference must exist: a foreign one written after the Exclusive decision. The
 * first operator dies right after recording that decision (`record-decision`, the shared sandbox not yet deleted,
 * so the decision it dies at is this sandbox's); the test then writes the late reference and deletes the shared
 * sandbox, and a middle operator dies at `erase-late`, once the finalizer is gone and the late reference erased
 * (its report is what such a crash loses, deletion/late-references.ts).
 *
 * The operators walk a scripted session ledger. For the `start-walk` step the exclusive sandbox is adopted:
 * its live walk finds an owner's history unavailable (no marker), the ledger then clears that owner, and the
 * deletion's walk, once due again, earns the marker; the operator dies as that walk's outcome is kept and
 * before any status write carries it, so the next operator must walk again before it may release anything.
 */
import { NetworkingV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATIONS, GROUP, LABELS, SANDBOX } from '../../operator/api/names.ts';
import { FAILPOINTS } from '../../operator/controller/deletion/failpoints.ts';
import { kubeConfig, kubectlOk, testNamespace } from '../harness/kube.ts';
import {
  createReference,
  createSandbox,
  deleteReference,
  deleteSandbox,
  getReference,
  getSandbox,
  sandboxGone,
  sandboxSeen,
  untilSandbox,
} from '../integration/controller/fixtures.ts';
import { LedgerServer, type LedgerScript } from '../integration/controller/ledger-server.ts';
import { core, eventually, pending } from '../integration/controller/operator.ts';
import { startOperatorProcess, type OperatorProcess } from './operator-process.ts';

const namespace = testNamespace('crash');
const running: OperatorProcess[] = [];
const script: LedgerScript = { owners: {}, locations: {} };
const ledger = new LedgerServer(script, 'ledger-secret');
let ledgerFlags: string[] = [];
beforeAll(async () => {
  ledgerFlags = await ledger.operatorFlags();
});
afterAll(async () => {
  await Promise.all(running.map((operator) => operator.stop()));
  await ledger.stop();
});

/**
 * The `start-walk` step's sandbox, before it is created: its ledger owner's history is unavailable, so its
 * live walk records no marker. `recorded` waits for that walk's status; `clear` then clears the owner.
 */
function unclearOwner(name: string) {
  script.owners[name] = [{ session: 'workspace_5', worktree: 'wt-1' }];
  script.locations['workspace_5'] = { state: 'history-unavailable', reason: 'archived' };
  return {
    recorded: () =>
      untilSandbox(
        namespace,
        name,
        `${name}'s live walk recorded without the marker`,
        (sandbox) => sandbox.status?.reconciliation?.state === 'Unavailable',
        60_000,
      ),
    clear: () => {
      script.locations['workspace_5'] = {
        state: 'located',
        sandbox: name,
        provider: 'kubernetes',
        worktree: 'wt-1',
      };
    },
  };
}

const WORKSPACE = {
  metadata: { name: 'work' },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Mi' } } },
};

const pods = async (sandbox: string) =>
  (await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=${sandbox}` })).items;

/** A sandbox's NetworkPolicies: it has no owner to cascade from, so only the release removes it. */
const policies = async (sandbox: string) =>
  (
    await kubeConfig()
      .makeApiClient(NetworkingV1Api)
      .listNamespacedNetworkPolicy({ namespace, labelSelector: `${LABELS.sandbox}=${sandbox}` })
  ).items;

async function sharedSandboxIntact(): Promise<void> {
  const sandbox = await getSandbox(namespace, 'shared');
  expect(sandbox).toBeDefined();
  const shared = await pods('shared');
  expect(shared).toHaveLength(2);
  for (const pod of shared) expect(pod.metadata?.deletionTimestamp).toBeUndefined();
  // Its pods stay isolated: the held sandbox's policy stands whatever the crash interrupted.
  expect(await policies('shared')).toHaveLength(1);
}

describe('a deletion interrupted by SIGKILL', () => {
  it.each(FAILPOINTS)(
    'resumes after a crash at %s and completes; the shared sandbox survives',
    async (step) => {
      const late = step === 'erase-late';
      const firstStep = late ? 'record-decision' : step;
      const first = await startOperatorProcess(namespace, { failpoints: [firstStep], flags: ledgerFlags });
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
      const unclear = step === 'start-walk' ? unclearOwner(name) : undefined;
      const adopted = unclear ? { [ANNOTATIONS.adoptedFrom]: 'crash-test v1' } : {};
      // The claim steps' sandbox has a persistent workspace: its release deletes the claim after the pods.
      const workspace = step.endsWith('-claim') ? { volumeClaimTemplates: [WORKSPACE] } : {};
      await createSandbox(namespace, name, {
        worktree: 'wt-1',
        replicas: 2,
        annotations: adopted,
        ...workspace,
      });
      await createReference(namespace, `${name}-own`, {
        sandbox: name,
        session: 'workspace_2',
        worktree: 'wt-1',
      });
      await createReference(namespace, `${name}-old`, {
        sandbox: name,
        session: 'workspace_3',
        worktree: 'wt-1',
        state: 'Detached',
      });
      if (step === 'erase')
        await createReference(namespace, `${name}-foreign`, {
          sandbox: name,
          session: 'workspace_4',
          worktree: 'wt-2',
        });
      await untilSandbox(namespace, name, `${name} running`, (s) => s.status?.phase === 'Running', 60_000);
      await untilSandbox(
        namespace,
        'shared',
        'shared blocked-ready',
        (s) => s.status?.references?.foreign === 1,
        60_000,
      );

      await unclear?.recorded();
      unclear?.clear();
      if (!late) await deleteSandbox(namespace, 'shared');
      await deleteSandbox(namespace, name);
      if (step === 'erase') {
        await untilSandbox(
          namespace,
          name,
          `${name} blocked by its foreign reference`,
          (s) => s.status?.phase === 'Blocked',
          60_000,
        );
        await kubectlOk([
          'annotate',
          `${SANDBOX.plural}.${GROUP}`,
          name,
          `${ANNOTATIONS.eraseReferences}=crash-test`,
          '-n',
          namespace,
        ]);
      }
      // Up to a walk's spacing for `start-walk`; on timeout, what the sandbox showed last.
      const killedAt = async (operator: OperatorProcess, failpoint: string) => {
        await eventually(
          `the operator killed at its ${failpoint} failpoint`,
          async () =>
            operator.child.exitCode !== null || operator.child.signalCode !== null
              ? true
              : pending(sandboxSeen(await getSandbox(namespace, name))),
          90_000,
        );
        expect(await operator.exited).toBe('SIGKILL');
        expect(operator.output()).toContain(`failpoint ${failpoint}: SIGKILL`);
      };
      await killedAt(first, firstStep);
      await sharedSandboxIntact();
      if (late) {
        expect((await getSandbox(namespace, name))?.status?.decision?.verdict).toBe('Exclusive');
        await createReference(namespace, `${name}-late`, {
          sandbox: name,
          session: 'workspace_6',
          worktree: 'wt-2',
        });
        await deleteSandbox(namespace, 'shared');
        const middle = await startOperatorProcess(namespace, { failpoints: [step], flags: ledgerFlags });
        running.push(middle);
        await killedAt(middle, step);
        // The failpoint fires once the late erase has written: the finalizer went first, then the late reference.
        expect(await getSandbox(namespace, name)).toBeUndefined();
        expect(await getReference(namespace, `${name}-late`)).toBeUndefined();
        await sharedSandboxIntact();
      }

      const second = await startOperatorProcess(namespace, { flags: ledgerFlags });
      running.push(second);
      await sandboxGone(namespace, name, 60_000);
      expect(await pods(name)).toHaveLength(0);
      expect(await policies(name)).toHaveLength(0);
      if (step.endsWith('-claim'))
        await eventually('the workspace claim gone', async () => {
          const claims = await core().listNamespacedPersistentVolumeClaim({
            namespace,
            labelSelector: `${LABELS.sandbox}=${name}`,
          });
          return claims.items.length === 0 ? true : pending(claims.items.map((c) => c.metadata));
        });
      // The kept outcome died with the first operator: the second walked again before it released.
      if (step === 'start-walk') expect(second.output()).toContain('legacy walk finished');
      await untilSandbox(namespace, 'shared', 'shared blocked', (s) => s.status?.phase === 'Blocked', 60_000);
      await sharedSandboxIntact();
      await deleteReference(namespace, 'shared-foreign');
      await sandboxGone(namespace, 'shared', 60_000);
      await second.stop();
    },
  );
});
