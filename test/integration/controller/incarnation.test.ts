/**
 * A Sandbox's name outlives its incarnations: once a released Sandbox is gone, GitOps (or a user) may create a
 * new one under the same name at once, and its sessions attach to it. The operator's Sandbox watch can lag
 * behind its SessionReference and pod watches (a cut watch, a slow relist), so a reference event can start a
 * pass over the cached, deleting, past incarnation. Such a pass must not touch the new incarnation's pods,
 * references, status or finalizers: every destructive write is bound to the uid it was decided for.
 */
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXCLUSIVITY_FINALIZER, LABELS } from '../../../operator/api/names.ts';
import { KubeRequestError } from '../../../operator/kube/errors.ts';
import { kubeClients } from '../../../operator/kube/clients.ts';
import { kubeSandboxApi } from '../../../operator/controller/adapters/sandbox-api.ts';
import { kwokNodeName } from '@sandbox-operator/local-cluster';
import { sandboxWatchGate, startHoldingProxy, type HoldingProxy } from '../../harness/holding-proxy.ts';
import { kubeConfig, testNamespace } from '../../harness/kube.ts';
import { sandboxControllerActivity } from '../../harness/prometheus-text.ts';
import {
  createReference,
  createSandbox,
  deleteSandbox,
  getReference,
  getSandbox,
  untilSandbox,
  sandboxGone,
} from './fixtures.ts';
import {
  core,
  eventually,
  pending,
  grantOperatorRbac,
  restrictedKubeConfig,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const namespace = testNamespace('incarnation');
const NAME = 'reborn';
let operator: RunningOperator;
let proxy: HoldingProxy;

/** Armed: the operator's next metadata PATCH of the Sandbox (its finalizer removal) freezes the Sandbox watch. */
let armed = false;
const watch = sandboxWatchGate();

beforeAll(async () => {
  await grantOperatorRbac();
  proxy = await startHoldingProxy(
    restrictedKubeConfig(),
    (method, url) => {
      if (armed && method === 'PATCH' && url.includes(`/sandboxes/${NAME}`) && !url.includes('/status'))
        watch.freeze();
      return undefined;
    },
    watch.valve,
  );
  operator = startOperator(namespace, [], undefined, proxy.kubeConfig);
});
afterAll(async () => {
  watch.thaw();
  await operator.stop();
  await proxy.close();
});

const queueSettled = sandboxControllerActivity;

describe('a pass over a past incarnation of a Sandbox', () => {
  it('leaves the pods, references, status and finalizers of the Sandbox now under its name alone', async () => {
    await createSandbox(namespace, NAME, { worktree: 'wt-1' });
    await untilSandbox(
      namespace,
      NAME,
      'the first incarnation running',
      (sandbox) => sandbox.status?.phase === 'Running',
    );
    armed = true;
    await deleteSandbox(namespace, NAME);
    await sandboxGone(namespace, NAME);
    expect(watch.frozen).toBe(true); // the operator's store still holds the deleting first incarnation

    await createSandbox(namespace, NAME, { worktree: 'wt-1' });
    const reborn = await getSandbox(namespace, NAME);
    const uid = reborn?.metadata.uid ?? '';
    expect(uid).not.toBe('');
    // The second incarnation's pod (as a previous operator leader would have created it) and its session.
    await kubeConfig({ restricted: true })
      .makeApiClient(CoreV1Api)
      .createNamespacedPod({
        namespace,
        body: {
          metadata: {
            name: `${NAME}-0`,
            labels: { [LABELS.sandbox]: NAME },
            finalizers: [EXCLUSIVITY_FINALIZER],
            ownerReferences: [
              {
                apiVersion: 'sandbox.agents.dev/v1alpha1',
                kind: 'Sandbox',
                name: NAME,
                uid,
                controller: true,
              },
            ],
          },
          spec: {
            nodeName: kwokNodeName(0),
            containers: [{ name: 'agent', image: 'registry.example/agent:1' }],
          },
        },
      });
    const port = await operator.port;
    const before = (await queueSettled(port)).reconciles;
    await createReference(namespace, 'reborn-session', {
      sandbox: NAME,
      session: 'workspace_r',
      worktree: 'wt-1',
    });
    // The reference event starts a pass over the cached first incarnation; wait until it has run.
    await eventually('the pass over the past incarnation done', async () => {
      const now = await queueSettled(port);
      return now.reconciles > before && now.busy === 0 ? true : pending({ before, now });
    });

    const pod = await core().readNamespacedPod({ namespace, name: `${NAME}-0` });
    expect(pod.metadata?.deletionTimestamp).toBeUndefined();
    expect((await getReference(namespace, 'reborn-session'))?.spec.state).toBe('Attached');
    expect((await getSandbox(namespace, NAME))?.status?.decision).toBeUndefined();

    watch.thaw();
    const current = await untilSandbox(
      namespace,
      NAME,
      'the new incarnation adopted',
      (sandbox) => sandbox.metadata.finalizers?.includes(EXCLUSIVITY_FINALIZER) === true,
    );
    expect(current.metadata.uid).toBe(uid);
    expect(current.status?.decision).toBeUndefined();
    expect((await getReference(namespace, 'reborn-session'))?.spec.state).toBe('Attached');
    const kept = await core().readNamespacedPod({ namespace, name: `${NAME}-0` });
    expect(kept.metadata?.uid).toBe(pod.metadata?.uid);
    expect(kept.metadata?.deletionTimestamp).toBeUndefined();

    // And the new incarnation, exclusive (its only session is of its own worktree), is released in turn.
    await deleteSandbox(namespace, NAME);
    await sandboxGone(namespace, NAME);
  });

  it('refuses a status or metadata write bound to another incarnation, and applies one bound to this one', async () => {
    await createSandbox(namespace, 'bound', { finalizers: ['example.com/hold'] });
    const sandbox = await getSandbox(namespace, 'bound');
    const api = kubeSandboxApi(kubeClients(kubeConfig()));
    const past = { namespace, name: 'bound', uid: 'a-past-incarnation' };
    const refused = async (write: Promise<unknown>) => {
      const error: unknown = await write.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(KubeRequestError);
      expect((error as KubeRequestError).conflict).toBe(true);
    };
    await refused(api.patchStatus(past, undefined, { phase: 'Blocked' }));
    await refused(api.patchMetadata(past, [{ op: 'remove', path: '/metadata/finalizers/0' }]));
    const after = await getSandbox(namespace, 'bound');
    expect(after?.metadata.finalizers?.[0]).toBe('example.com/hold'); // the operator may have added its own
    expect(after?.status?.phase).not.toBe('Blocked'); // the operator writes its own status meanwhile, never this one

    const current = { namespace, name: 'bound', uid: sandbox?.metadata.uid ?? '' };
    await api.patchMetadata(current, [{ op: 'remove', path: '/metadata/finalizers/0' }]);
    expect((await getSandbox(namespace, 'bound'))?.metadata.finalizers ?? []).not.toContain(
      'example.com/hold',
    );
  });
});
