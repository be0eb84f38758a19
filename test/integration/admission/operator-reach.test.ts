/**
 * How far a leaked operator token reaches (issue 26, item 1), against the real API server as the restricted
 * operator user, whose chart RBAC grants pods, budgets and Events cluster-wide. Admission bounds each right to
 * what the controller does with it: a pod it creates passes the pod-template checks at its namespace's level
 * (the injected shell reaper alone may keep its root mode's capabilities, where an administrator allowed that
 * mode: reaper-bounds.test.ts), never lands in a system namespace or the release's own; budgets are only the
 * eviction guards of sandboxes, Events only about Sandboxes; of a Sandbox's status, the record of an erase stays.
 */
import { CoreV1Api, PolicyV1Api, type V1Pod } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ANNOTATIONS,
  API_VERSION,
  EXCLUSIVITY_FINALIZER,
  LABELS,
  MANAGED_BY,
  RUNTIME_CLASSES_ANNOTATION,
} from '../../../operator/api/names.ts';
import type { Sandbox } from '../../../operator/api/objects.ts';
import { sandboxPod } from '../../../operator/controller/pod-template.ts';
import { kubeConfig, kubectl, kubectlOk, optInToRootReaper, testNamespace } from '../../harness/kube.ts';
import { createSandbox, getSandbox } from '../controller/fixtures.ts';
import { grantOperatorRbac, OPERATOR_NAMESPACE } from '../controller/operator.ts';

const namespace = testNamespace('operator-reach');
const asOperator = () => kubeConfig({ restricted: true }).makeApiClient(CoreV1Api);
const budgetsAsOperator = () => kubeConfig({ restricted: true }).makeApiClient(PolicyV1Api);
let sandbox: Sandbox;

beforeAll(async () => {
  await grantOperatorRbac();
  await optInToRootReaper(namespace);
  await createSandbox(namespace, 'reach', { worktree: 'wt-1', onNode: false });
  const stored = await getSandbox(namespace, 'reach');
  if (stored === undefined) throw new Error('the Sandbox was not stored');
  // The reaper on in its root mode, as a Sandbox asking for it gets it in a namespace an administrator opted
  // in (the builder reads only the object and settings it is given): the most the operator ever adds.
  const base = stored as unknown as Sandbox;
  const shellReaper = { enabled: true, gracePeriodSeconds: 5, mode: 'Privileged' as const };
  sandbox = { ...base, spec: { ...base.spec, shellReaper } };
});

/** A pod the operator would create for the sandbox (the real builder), then `change`d as a leaked token would. */
function operatorPod(name: string, change: (pod: V1Pod) => void = () => undefined, where = namespace): V1Pod {
  const pod = sandboxPod(sandbox, 0, {
    image: 'registry.example/operator:1',
    serviceAccountName: 'reaper',
    podSecurityLevel: () => 'privileged',
    privilegedReaperAllowed: () => true,
  });
  pod.metadata = { ...pod.metadata, name, namespace: where };
  change(pod);
  return pod;
}
const spec = (pod: V1Pod) => pod.spec ?? { containers: [] };

/** The API server's refusal message, or 'allowed'. */
const outcome = (call: Promise<unknown>) =>
  call.then(
    () => 'allowed',
    (error: unknown) => String((error as { body?: unknown }).body ?? error),
  );
const create = (pod: V1Pod) =>
  outcome(asOperator().createNamespacedPod({ namespace: pod.metadata?.namespace ?? namespace, body: pod }));

describe('pods the operator’s identity creates', () => {
  it('are admitted as the controller builds them, with the shell reaper in its privileged mode', async () => {
    const pod = operatorPod('reach-0', (p) => {
      // The root sidecar: capabilities the baseline checks refuse, which the bound spares the reaper alone.
      expect(spec(p).initContainers?.[0]?.securityContext?.capabilities?.add).toContain('SYS_PTRACE');
    });
    expect(await create(pod)).toBe('allowed');
  });

  it.each([
    ['a privileged container', (p: V1Pod) => (spec(p).containers[0]!.securityContext = { privileged: true })],
    [
      'hostPID',
      (p: V1Pod) => {
        // The API server refuses hostPID beside a shared process namespace before admission sees it.
        spec(p).shareProcessNamespace = false;
        spec(p).hostPID = true;
      },
    ],
    ['hostIPC', (p: V1Pod) => (spec(p).hostIPC = true)],
    [
      'a hostPath volume',
      (p: V1Pod) =>
        (spec(p).volumes = [...(spec(p).volumes ?? []), { name: 'root', hostPath: { path: '/' } }]),
    ],
    [
      'an agent container with the reaper’s capabilities',
      (p: V1Pod) => (spec(p).containers[0]!.securityContext = { capabilities: { add: ['SYS_PTRACE'] } }),
    ],
    [
      'a reaper with capabilities beyond its own',
      (p: V1Pod) => spec(p).initContainers![0]!.securityContext!.capabilities!.add!.push('SYS_ADMIN'),
    ],
    [
      'a privileged reaper',
      (p: V1Pod) => {
        const context = spec(p).initContainers![0]!.securityContext!;
        // A privileged container must be allowed to escalate, or the API server refuses it before admission.
        context.privileged = true;
        context.allowPrivilegeEscalation = true;
      },
    ],
    // Past the securityContext (issue 26, item 3): what the pod-template policy refuses a template, too.
    [
      'an unconfined AppArmor annotation',
      (p: V1Pod) =>
        (p.metadata!.annotations = { 'container.apparmor.security.beta.kubernetes.io/agent': 'unconfined' }),
    ],
    ['a node of its own choosing', (p: V1Pod) => (spec(p).nodeName = 'control-plane-0')],
    ['a toleration of every taint', (p: V1Pod) => (spec(p).tolerations = [{ operator: 'Exists' }])],
    ['a system priority class', (p: V1Pod) => (spec(p).priorityClassName = 'system-node-critical')],
    [
      'a gitRepo volume',
      (p: V1Pod) =>
        (spec(p).volumes = [...(spec(p).volumes ?? []), { name: 'repo', gitRepo: { repository: 'x' } }]),
    ],
  ])('are refused with %s at the namespace’s level (baseline)', async (what, change) => {
    const refused = await create(
      operatorPod(`reach-${what.toLowerCase().replaceAll(/[^a-z]/g, '')}`, change),
    );
    expect(refused).toContain('the operator may create only pods');
    expect(refused).toContain('at pod-template level baseline');
  });

  it.each([
    [
      'the reaper’s token',
      (p: V1Pod) =>
        spec(p).containers[0]!.volumeMounts!.push({
          name: 'sandbox-reaper-token',
          mountPath: '/t',
          readOnly: true,
        }),
    ],
    [
      'the reaper’s socket read-write',
      (p: V1Pod) =>
        (spec(p).containers[0]!.volumeMounts!.find((m) => m.name === 'sandbox-reaper-socket')!.readOnly =
          false),
    ],
  ])('are refused with an agent mounting %s', async (what, change) => {
    const refused = await create(operatorPod(`reach-mount-${what.length}`, change));
    expect(refused).toContain('only the shell reaper mounts sandbox-reaper-token');
  });

  it('are refused without the runtime class the namespace pins', async () => {
    await kubectlOk(['annotate', 'namespace', namespace, `${RUNTIME_CLASSES_ANNOTATION}=gvisor`]);
    try {
      const refused = await create(operatorPod('reach-runc'));
      expect(refused).toContain('spec.runtimeClassName must be one of gvisor');
    } finally {
      await kubectlOk(['annotate', 'namespace', namespace, `${RUNTIME_CLASSES_ANNOTATION}-`]);
    }
  });

  it('are refused in the system namespaces and the release’s own', async () => {
    for (const where of ['kube-system', 'kube-public', 'kube-node-lease', OPERATOR_NAMESPACE]) {
      const refused = await create(operatorPod('reach-elsewhere', () => undefined, where));
      expect(refused, where).toContain(`the operator creates nothing in ${where}`);
    }
  });
});

describe('budgets the operator’s identity writes', () => {
  const budget = (name: string, sandboxLabel: string, selector: Record<string, string>, labelled = true) => ({
    metadata: {
      name,
      namespace,
      ...(labelled ? { labels: { [LABELS.sandbox]: sandboxLabel, [LABELS.managedBy]: MANAGED_BY } } : {}),
    },
    spec: { maxUnavailable: 0, selector: { matchLabels: selector } },
  });
  const createBudget = (body: ReturnType<typeof budget>) =>
    outcome(budgetsAsOperator().createNamespacedPodDisruptionBudget({ namespace, body }));

  it('are the eviction guards of sandboxes', async () => {
    expect(await createBudget(budget('reach-sandbox', 'reach', { [LABELS.sandbox]: 'reach' }))).toBe(
      'allowed',
    );
  });

  it('are refused for budgets of other pods, or unlabelled', async () => {
    const other = await createBudget(budget('ingress-sandbox', 'ingress', { app: 'ingress' }));
    expect(other).toContain('the operator may write only the eviction guards of sandboxes');
    const unlabelled = await createBudget(budget('web-sandbox', 'web', { [LABELS.sandbox]: 'web' }, false));
    expect(unlabelled).toContain('the operator may write only the eviction guards of sandboxes');
  });

  it('are refused deleting a budget that is not a sandbox’s guard', async () => {
    await kubeConfig()
      .makeApiClient(PolicyV1Api)
      .createNamespacedPodDisruptionBudget({
        namespace,
        body: {
          metadata: { name: 'team-budget' },
          spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'x' } } },
        },
      });
    const refused = await outcome(
      budgetsAsOperator().deleteNamespacedPodDisruptionBudget({ namespace, name: 'team-budget' }),
    );
    expect(refused).toContain('the operator may write only the eviction guards of sandboxes');
  });
});

describe('Events the operator’s identity records', () => {
  const event = (name: string, involvedObject: object) => ({
    metadata: { name, namespace },
    involvedObject: { namespace, ...involvedObject },
    reason: 'Test',
    message: 'written as the operator',
    type: 'Normal',
  });
  const record = (body: ReturnType<typeof event>) =>
    outcome(asOperator().createNamespacedEvent({ namespace, body }));

  it('are about Sandboxes, and the sandbox claims and warm pools it binds and keeps', async () => {
    expect(await record(event('reach.1', { kind: 'Sandbox', apiVersion: API_VERSION, name: 'reach' }))).toBe(
      'allowed',
    );
    expect(await record(event('reach.3', { kind: 'SandboxClaim', apiVersion: API_VERSION, name: 'c' }))).toBe(
      'allowed',
    );
  });

  it('are refused about anything else', async () => {
    const refused = await record(event('reach.2', { kind: 'Pod', apiVersion: 'v1', name: 'reach-0' }));
    expect(refused).toContain(
      'the operator records Events only about Sandbox, SandboxClaim, SandboxWarmPool',
    );
  });
});

describe('Sandboxes the operator’s identity changes', () => {
  const asOperator = (args: string[]) => kubectl([...args, '-n', namespace], { restricted: true });

  it('keep the spec their owner wrote', async () => {
    const patched = await asOperator([
      'patch',
      'sandbox',
      'reach',
      '--type=merge',
      '-p',
      '{"spec":{"cleanup":{"policy":"DeleteWhenUnreferenced"}}}',
    ]);
    expect(patched.stderr).toContain('the operator never changes a Sandbox’s spec');
  });

  /** A status PATCH of the operator's identity, as its status writer sends one. */
  const patchStatus = (name: string, patch: object, type: 'merge' | 'json' = 'merge') =>
    asOperator([
      'patch',
      'sandbox',
      name,
      '--subresource=status',
      `--type=${type}`,
      '-p',
      JSON.stringify(patch),
    ]);

  it('record an administrator’s erase only as the request the Sandbox carries, and never clear the record', async () => {
    await createSandbox(namespace, 'erase-record', {
      worktree: 'wt-1',
      onNode: false,
      annotations: { [ANNOTATIONS.eraseReferences]: 'INC-1' },
    });
    const recordAs = (erasedFor: string) =>
      patchStatus('erase-record', { status: { capacity: { overflowed: false, erasedFor } } });
    const refusal =
      'the operator records in status.capacity.erasedFor only the erase request the Sandbox carries';
    expect((await recordAs('INC-0')).stderr).toContain(refusal);
    const recorded = await recordAs('INC-1');
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    // Kept as it is while the rest of the status changes.
    const kept = await patchStatus('erase-record', { status: { capacity: { overflowed: true } } });
    expect(kept.exitCode, kept.stderr).toBe(0);
    // A leaked token clearing the record would make the request pending again, and the review admit deletes.
    const cleared = await patchStatus(
      'erase-record',
      [{ op: 'remove', path: '/status/capacity/erasedFor' }],
      'json',
    );
    expect(cleared.stderr).toContain(refusal);
    expect((await recordAs('INC-2')).stderr).toContain(refusal);
    // A new request from an administrator is recorded once acted on.
    await kubectlOk([
      'annotate',
      'sandbox',
      'erase-record',
      '-n',
      namespace,
      '--overwrite',
      `${ANNOTATIONS.eraseReferences}=INC-2`,
    ]);
    const next = await recordAs('INC-2');
    expect(next.exitCode, next.stderr).toBe(0);
  });

  it('record an erase request the Sandbox carries before its first status as done, with that status', async () => {
    // A restore or a GitOps re-create brings the annotation back: inherited, it erases nothing, unless a first
    // status without the record made it look like a new request.
    await createSandbox(namespace, 'erase-inherited', {
      worktree: 'wt-1',
      onNode: false,
      annotations: { [ANNOTATIONS.eraseReferences]: 'INC-1' },
    });
    const firstStatus = (status: object) =>
      patchStatus('erase-inherited', {
        status: { reconciliation: { state: 'NotRequired', marker: true }, ...status },
      });
    expect((await firstStatus({})).stderr).toContain('that one already with its first status');
    const recorded = await firstStatus({ capacity: { overflowed: false, erasedFor: 'INC-1' } });
    expect(recorded.exitCode, recorded.stderr).toBe(0);
  });

  it('never remove the record of the legacy reconciliation once written', async () => {
    // Written again, a first status decides from the annotations: an adopted sandbox whose adopted-from a replace
    // dropped would pass for one born with the marker, a write the marker review never sees.
    await createSandbox(namespace, 'reconciled', { worktree: 'wt-1', onNode: false });
    const first = await patchStatus('reconciled', {
      status: { reconciliation: { state: 'Incomplete', marker: false } },
    });
    expect(first.exitCode, first.stderr).toBe(0);
    const refusal = 'the operator never removes a Sandbox’s status.reconciliation';
    expect((await patchStatus('reconciled', { status: { reconciliation: null } })).stderr).toContain(refusal);
    const json = [{ op: 'remove', path: '/status/reconciliation' }];
    expect((await patchStatus('reconciled', json, 'json')).stderr).toContain(refusal);
    const kept = await patchStatus('reconciled', { status: { reconciliation: { state: 'Pending' } } });
    expect(kept.exitCode, kept.stderr).toBe(0);
  });
});

describe('the finalizer it creates pods with', () => {
  it('is still required', async () => {
    const bare = operatorPod('reach-bare', (p) => (p.metadata!.finalizers = []));
    expect(await create(bare)).toContain(EXCLUSIVITY_FINALIZER);
  });
});
