/**
 * A live sandbox's NetworkPolicy (controller/network-isolation.ts) through scripted ports: kept before any pod
 * is created, removed only for an Unmanaged sandbox its namespace allows, a refusal said as a misconfiguration.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { DesiredNetworkPolicy } from '../../../operator/api/network-policy.ts';
import type { ReconcilerContext } from '../../../operator/controller/context.ts';
import { keepNetworkIsolation } from '../../../operator/controller/network-isolation.ts';
import type { NetworkPolicyApi } from '../../../operator/controller/ports.ts';
import { reconcileSandbox } from '../../../operator/controller/sandbox-reconciler.ts';
import { KubeRequestError } from '../../../operator/kube/errors.ts';
import { controllerErrorOf, errorPolicy } from '../../../operator/runtime/error-policy.ts';
import { NAMESPACE, sandbox, type SandboxBuilder } from '../builders.ts';
import { contextOf, expect_, failing, held, Script, settle, silent } from './scripted-ports.ts';

const API_SERVER = [{ address: '10.0.0.1', port: 6443 }];

/** The NetworkPolicy port, scripted as the others; `written` gets each policy `ensure` was given. */
function withNetwork(ctx: ReconcilerContext, script: Script, written: DesiredNetworkPolicy[] = []) {
  const reply = <T>(call: string) => Promise.resolve().then(() => script.answer(call) as T);
  const networkPolicies: NetworkPolicyApi = {
    unmanagedAllowed: (namespace) => reply(`networkPolicies.unmanagedAllowed(${namespace})`),
    apiServerEndpoints: () => reply('networkPolicies.apiServerEndpoints()'),
    ensure: (policy) => {
      written.push(policy);
      return reply(`networkPolicies.ensure(${policy.metadata.name})`);
    },
    removeOwned: (identity) => reply(`networkPolicies.removeOwned(${identity.name})`),
    mayStand: () => true,
  };
  return { ...ctx, ports: { ...ctx.ports, networkPolicies } };
}

const guarded = () => sandbox('sbx').finalized().withSpec({ replicas: 1 }).withGuard();

describe('a live sandbox’s NetworkPolicy', () => {
  it('stands before its pods are created: they wait for it', async () => {
    const subject = guarded();
    const script = new Script([
      expect_('sandboxes.readLive(sbx)', subject.live()),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('networkPolicies.apiServerEndpoints()', API_SERVER),
      expect_('networkPolicies.ensure(sbx-sandbox)', 'Created'),
      expect_('pods.create(sbx-0)', 'Created'),
    ]);
    const { ctx, inFlight, open } = held(withNetwork(contextOf(subject.store(), script), script), 1);
    const reconciled = reconcileSandbox(ctx, `${NAMESPACE}/sbx`, silent);
    await settle();
    expect(inFlight).toEqual([
      'sandboxes.readLive',
      'sandboxes.patchStatus',
      'networkPolicies.apiServerEndpoints',
    ]);
    open();
    await reconciled;
    script.finish();
  });

  it('creates no pod when the policy is refused, and says it as a misconfiguration', async () => {
    const subject = guarded();
    const refused = new KubeRequestError('Create', 'networkpolicy ns/sbx-sandbox', 403, {
      cause: new Error(
        "networkpolicies.networking.k8s.io \"sbx-sandbox\" is forbidden: ValidatingAdmissionPolicy 'no-netpol' with binding 'no-netpol' denied request: no policies here",
      ),
    });
    const script = new Script([
      expect_('sandboxes.readLive(sbx)', subject.live()),
      expect_('sandboxes.patchStatus(sbx)'),
      expect_('networkPolicies.apiServerEndpoints()', API_SERVER),
      failing('networkPolicies.ensure(sbx-sandbox)', refused),
    ]);
    const ctx = withNetwork(contextOf(subject.store(), script), script);
    const thrown = await reconcileSandbox(ctx, `${NAMESPACE}/sbx`, silent).then(
      () => undefined,
      (error: unknown) => error,
    );
    script.finish();
    expect(errorPolicy(controllerErrorOf(thrown))).toMatchObject({
      kind: 'AwaitFix',
      misconfiguration: {
        reason: 'NetworkPolicyRefused',
        refused: expect.stringContaining('NetworkPolicy sbx-sandbox refused: '),
        fix: expect.stringContaining("until then the sandbox's pods are not created"),
      },
    });
  });
});

describe('keepNetworkIsolation', () => {
  const keep = async (
    subject: SandboxBuilder,
    expected: ConstructorParameters<typeof Script>[0],
    settings: Partial<ReconcilerContext> = {},
  ) => {
    const script = new Script(expected);
    const written: DesiredNetworkPolicy[] = [];
    const ctx = { ...withNetwork(contextOf(subject.store(), script), script, written), ...settings };
    const state = subject.store().sandbox(`${NAMESPACE}/${subject.name}`);
    if (!state?.ok) throw new Error('the builder’s sandbox parses');
    const outcome = await keepNetworkIsolation(ctx, state.value, silent);
    script.finish();
    return { outcome, written };
  };

  it('writes the Managed policy with the API server’s endpoints, asking no namespace', async () => {
    const { outcome, written } = await keep(guarded(), [
      expect_('networkPolicies.apiServerEndpoints()', API_SERVER),
      expect_('networkPolicies.ensure(sbx-sandbox)', 'Unchanged'),
    ]);
    expect(outcome).toEqual({ kind: 'Kept' });
    expect(written[0]?.spec.egress[2]?.to).toEqual([{ ipBlock: { cidr: '10.0.0.1/32' } }]);
    expect(written[0]?.metadata).not.toHaveProperty('ownerReferences');
  });

  it('opens the cluster DNS the operator was given (--cluster-dns)', async () => {
    const clusterDns = {
      namespace: 'openshift-dns',
      podLabels: { 'dns.operator.openshift.io/daemonset-dns': 'default' },
    };
    const { written } = await keep(
      guarded(),
      [
        expect_('networkPolicies.apiServerEndpoints()', API_SERVER),
        expect_('networkPolicies.ensure(sbx-sandbox)', 'Repaired'),
      ],
      { clusterDns },
    );
    expect(written[0]?.spec.egress[1]?.to).toEqual([
      {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'openshift-dns' } },
        podSelector: { matchLabels: clusterDns.podLabels },
      },
    ]);
  });

  it('keeps managing an Unmanaged sandbox its namespace does not allow', async () => {
    const { written } = await keep(guarded().withSpec({ network: { management: 'Unmanaged' } }), [
      expect_(`networkPolicies.unmanagedAllowed(${NAMESPACE})`, false),
      expect_('networkPolicies.apiServerEndpoints()', []),
      expect_('networkPolicies.ensure(sbx-sandbox)', 'Repaired'),
    ]);
    expect(written).toHaveLength(1);
  });

  it('removes its own policy of an Unmanaged sandbox its namespace allows, and writes none', async () => {
    const { outcome, written } = await keep(guarded().withSpec({ network: { management: 'Unmanaged' } }), [
      expect_(`networkPolicies.unmanagedAllowed(${NAMESPACE})`, true),
      expect_('networkPolicies.removeOwned(sbx)', 'Removed'),
    ]);
    expect(outcome).toEqual({ kind: 'Kept' });
    expect(written).toEqual([]);
  });

  it('is kept in a terminating namespace, where nothing new can be created', async () => {
    const terminating = new KubeRequestError('Create', 'networkpolicy ns/sbx-sandbox', 403, {
      cause: new Error(
        'networkpolicies "sbx-sandbox" is forbidden: unable to create new content in namespace ns because it is being terminated',
      ),
    });
    const { outcome } = await keep(guarded(), [
      expect_('networkPolicies.apiServerEndpoints()', API_SERVER),
      failing('networkPolicies.ensure(sbx-sandbox)', terminating),
    ]);
    expect(outcome).toEqual({ kind: 'Kept' });
  });

  it('fails the turn on anything else (retried from fresh state)', async () => {
    const stale = new KubeRequestError('Replace', 'networkpolicy ns/sbx-sandbox', 409, {
      cause: new Error('conflict'),
    });
    await expect(
      keep(guarded(), [
        expect_('networkPolicies.apiServerEndpoints()', API_SERVER),
        failing('networkPolicies.ensure(sbx-sandbox)', stale),
      ]),
    ).rejects.toBe(stale);
  });
});

describe('the API server’s missing EndpointSlice', () => {
  it('is said once per operator, and again only after a slice was seen in between', async () => {
    const said: string[] = [];
    const log = pino(
      { level: 'warn' },
      { write: (line: string) => said.push((JSON.parse(line) as { msg: string }).msg) },
    );
    const script = new Script([
      expect_('networkPolicies.apiServerEndpoints()', []),
      expect_('networkPolicies.ensure(sbx-sandbox)', 'Created'),
      expect_('networkPolicies.apiServerEndpoints()', []),
      expect_('networkPolicies.ensure(sbx-sandbox)', 'Repaired'),
      expect_('networkPolicies.apiServerEndpoints()', API_SERVER),
      expect_('networkPolicies.ensure(sbx-sandbox)', 'Repaired'),
      expect_('networkPolicies.apiServerEndpoints()', []),
      expect_('networkPolicies.ensure(sbx-sandbox)', 'Repaired'),
    ]);
    const subject = guarded();
    const ctx = withNetwork(contextOf(subject.store(), script), script);
    const state = subject.store().sandbox(`${NAMESPACE}/sbx`);
    if (!state?.ok) throw new Error('the builder’s sandbox parses');
    for (let turn = 0; turn < 4; turn++) await keepNetworkIsolation(ctx, state.value, log);
    script.finish();
    const missing = said.filter((msg) => msg.startsWith('no EndpointSlice default/kubernetes'));
    expect(missing).toHaveLength(2);
  });
});
