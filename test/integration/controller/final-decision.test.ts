/**
 * An Exclusive decision is final: once recorded it is never made again, whatever a turn's cache says. The
 * controller's Sandbox watch can lag behind its reference and pod watches (a cut watch, a slow relist), so a
 * turn may start from a cached Sandbox whose status does not yet show the Exclusive decision an earlier turn
 * recorded, while the cache already holds a reference written after that decision (an attach that saw the
 * fence late). Deciding again on that cache records Foreign over Exclusive after the pods are released: the
 * sandbox is left Blocked with nothing to protect. Found by the soak's late-reference move (seed 20261246,
 * issue 25); here the interleaving is forced, not hoped for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxWatchGate, startHoldingProxy, type HoldingProxy } from '../../harness/holding-proxy.ts';
import { testNamespace } from '../../harness/kube.ts';
import {
  createReference,
  createSandbox,
  deleteSandbox,
  getReference,
  getSandbox,
  sandboxGone,
  untilSandbox,
} from './fixtures.ts';
import {
  core,
  eventually,
  grantOperatorRbac,
  pending,
  restrictedKubeConfig,
  startOperator,
  type RunningOperator,
} from './operator.ts';

const namespace = testNamespace('final-decision');
const NAME = 'decided';
let operator: RunningOperator;
let proxy: HoldingProxy;

/**
 * Armed: the operator's status PATCH that records the Exclusive decision freezes its Sandbox watch — that one,
 * not any status write in flight when armed (which would freeze the watch before it shows the deletion).
 */
let armed = false;
const watch = sandboxWatchGate();
/** The operator's DELETE of the sandbox's pod waits here, so the late reference lands before the release goes on. */
let releasePod: () => void = () => undefined;
const podReleased = new Promise<void>((resolve) => (releasePod = resolve));

beforeAll(async () => {
  await grantOperatorRbac();
  proxy = await startHoldingProxy(
    restrictedKubeConfig(),
    (method, url, body) => {
      const decision = body.includes('"verdict":"Exclusive"');
      if (armed && method === 'PATCH' && url.includes(`/sandboxes/${NAME}/status`) && decision)
        watch.freeze();
      if (armed && method === 'DELETE' && url.includes(`/pods/${NAME}-0`)) return podReleased;
      return undefined;
    },
    watch.valve,
  );
  operator = startOperator(namespace, [], undefined, proxy.kubeConfig);
});
afterAll(async () => {
  watch.thaw();
  releasePod();
  await operator.stop();
  await proxy.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('an Exclusive decision recorded while the Sandbox watch lags', () => {
  it('is not made again on a cache that misses it: a late reference is erased and the sandbox released', async () => {
    await createSandbox(namespace, NAME, { worktree: 'wt-1' });
    await untilSandbox(namespace, NAME, 'running', (sandbox) => sandbox.status?.phase === 'Running');
    armed = true;
    await deleteSandbox(namespace, NAME);
    await untilSandbox(
      namespace,
      NAME,
      'the Exclusive decision recorded',
      (sandbox) => sandbox.status?.decision?.verdict === 'Exclusive',
    );
    expect(watch.frozen).toBe(true); // the operator's cache still holds the Sandbox without its decision

    // A foreign session's host writes its reference after the decision: an attach that saw the fence too late.
    await createReference(namespace, 'late-session', {
      sandbox: NAME,
      session: 'workspace_late',
      worktree: 'wt-2',
    });
    releasePod();

    // The reference's and the pod's events bring turns over the cached, undecided Sandbox. None may decide again.
    const seen = new Set<string>();
    for (let waited = 0; waited < 3_000; waited += 100) {
      const now = await getSandbox(namespace, NAME);
      seen.add(now?.status?.decision?.verdict ?? 'gone');
      await sleep(100);
    }
    expect([...seen].filter((verdict) => verdict !== 'Exclusive' && verdict !== 'gone')).toEqual([]);

    watch.thaw();
    await sandboxGone(namespace, NAME);
    expect(await getReference(namespace, 'late-session')).toBeUndefined();
    const said = await eventually('the LateReferencesErased Event', async () => {
      const events = await core().listNamespacedEvent({
        namespace,
        fieldSelector: `involvedObject.name=${NAME},reason=LateReferencesErased`,
      });
      return events.items[0]?.message ?? pending({ events: events.items.length });
    });
    expect(said).toContain('late-session');
  });
});
