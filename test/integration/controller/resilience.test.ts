/**
 * Under contention: a finalizer written by someone else between our read and our patch is never dropped (the
 * JSON Patch `test` refuses the stale write and we retry from fresh state); and 200 sandboxes deleted at once
 * with 8 workers end with every exclusive one gone and every shared one kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, LABELS, SANDBOX, VERSION } from '../../../operator/api/names.ts';
import type { ControllerPorts } from '../../../operator/controller/ports.ts';
import { testNamespace } from '../../harness/kube.ts';
import {
  createReference,
  createSandbox,
  deleteSandbox,
  getSandbox,
  untilSandbox,
  sandboxGone,
} from './fixtures.ts';
import {
  core,
  customObjects,
  eventually,
  pending,
  grantOperatorRbac,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const namespace = testNamespace('resilience');
const THIRD_PARTY = 'example.com/backup-before-delete';
let operator: RunningOperator;
let injected = 0;

/**
 * Right after the operator read a `contended` pod, and before its DELETE and its finalizer patch, another party
 * puts its own finalizer first: the operator's `remove /metadata/finalizers/0`, computed from the old list, would
 * now drop theirs — unless its `test` of the list refuses the stale patch.
 */
const contend = (ports: ControllerPorts): ControllerPorts => ({
  ...ports,
  pods: {
    ...ports.pods,
    delete: async (ns, name, uid) => {
      if (name.startsWith('contended') && injected === 0) {
        injected += 1;
        await core().patchNamespacedPod({
          namespace: ns,
          name,
          body: [{ op: 'add', path: '/metadata/finalizers/0', value: THIRD_PARTY }],
        });
      }
      return ports.pods.delete(ns, name, uid);
    },
  },
});

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace, ['--workers', '8'], contend);
});
afterAll(async () => {
  await operator.stop();
});

describe('a write conflict', () => {
  it('never drops a finalizer another party added meanwhile', async () => {
    await createSandbox(namespace, 'contended', { worktree: 'wt-1' });
    await untilSandbox(namespace, 'contended', 'running', (sandbox) => sandbox.status?.phase === 'Running');
    await deleteSandbox(namespace, 'contended');
    const pod = await eventually('our finalizer gone, theirs kept', async () => {
      const [current] = (
        await core().listNamespacedPod({ namespace, labelSelector: `${LABELS.sandbox}=contended` })
      ).items;
      const finalizers = current?.metadata?.finalizers ?? [];
      return current && !finalizers.includes('sandbox.agents.dev/exclusivity')
        ? current
        : pending({ pod: current?.metadata?.name, finalizers });
    });
    expect(injected).toBe(1);
    expect(pod.metadata?.finalizers).toEqual([THIRD_PARTY]);
    // The sandbox waits for its pods to be gone: the third party finishes, then the sandbox goes.
    expect(await getSandbox(namespace, 'contended')).toBeDefined();
    await core().patchNamespacedPod({
      namespace,
      name: pod.metadata?.name ?? '',
      body: [{ op: 'remove', path: '/metadata/finalizers/0' }],
    });
    await sandboxGone(namespace, 'contended');
  });
});

describe('200 sandboxes deleted at once', () => {
  it('destroys every exclusive one and keeps every shared one', async () => {
    const names = Array.from({ length: 200 }, (_, i) => `bulk-${String(i).padStart(3, '0')}`);
    const shared = (name: string) => Number(name.slice(5)) % 2 === 0;
    for (let i = 0; i < names.length; i += 20) {
      await Promise.all(
        names.slice(i, i + 20).map(async (name) => {
          await createSandbox(namespace, name, { worktree: 'wt-1' });
          await createReference(namespace, `${name}-ref`, {
            sandbox: name,
            session: `workspace_${name}`,
            worktree: shared(name) ? 'wt-2' : 'wt-1',
          });
        }),
      );
    }
    const counted = async () => {
      const list = (await customObjects().listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SANDBOX.plural,
      })) as {
        items: {
          metadata: { name: string };
          status?: { phase?: string; references?: { attached?: number } };
        }[];
      };
      return list.items.filter((item) => item.metadata.name.startsWith('bulk-'));
    };
    await eventually(
      'all running and counted',
      async () => {
        const items = await counted();
        return items.length === 200 &&
          items.every((item) => item.status?.phase === 'Running' && item.status.references?.attached === 1)
          ? true
          : undefined;
      },
      180_000,
    );

    await Promise.all(names.map((name) => deleteSandbox(namespace, name)));
    await eventually(
      'exclusive gone, shared blocked',
      async () => {
        const items = await counted();
        const remaining = new Map(items.map((item) => [item.metadata.name, item.status?.phase]));
        return names.every((name) =>
          shared(name) ? remaining.get(name) === 'Blocked' : !remaining.has(name),
        )
          ? true
          : undefined;
      },
      180_000,
    );
    const pods = (await core().listNamespacedPod({ namespace, labelSelector: LABELS.sandbox })).items.filter(
      (p) => p.metadata?.name?.startsWith('bulk-'),
    );
    expect(pods).toHaveLength(100);
    for (const pod of pods) {
      expect(shared(pod.metadata?.labels?.[LABELS.sandbox] ?? '')).toBe(true);
      expect(pod.metadata?.deletionTimestamp).toBeUndefined();
    }
  }, 400_000);
});
