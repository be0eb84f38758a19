/**
 * What a leaked operator token may put into a pod's shell reaper (issue 26 #1), against the real API server as
 * the restricted operator user. The reaper is the one container the bounds let be root with SYS_PTRACE, so
 * they spare it only where an administrator allowed its root mode (the two namespace labels the operator
 * reads), and hold it to its shape everywhere: another command, image, probe, hook, variable or mount would
 * run the token holder's code in it (a `NODE_OPTIONS=--import`, a `postStart` exec, a script mounted over the
 * bundle).
 */
import { CoreV1Api, type V1Container, type V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMISSION_PARAMS } from '../../../operator/api/admission.ts';
import type { Sandbox } from '../../../operator/api/objects.ts';
import { DEFAULT_NAMESPACE } from '../../../operator/api/render-crds.ts';
import { sandboxPod } from '../../../operator/controller/pod-template.ts';
import { eventually, pending } from '../../harness/eventually.ts';
import { kubeConfig, optInToRootReaper, testNamespace } from '../../harness/kube.ts';
import { createSandbox, getSandbox } from '../controller/fixtures.ts';
import { grantOperatorRbac, startOperator } from '../controller/operator.ts';

const optedIn = testNamespace('reaper-bounds');
const plain = testNamespace('reaper-bounds-plain');
const IMAGE = 'registry.example/operator:1';
const sandboxes = new Map<string, Sandbox>();
const core = () => kubeConfig().makeApiClient(CoreV1Api);

beforeAll(async () => {
  await grantOperatorRbac();
  await optInToRootReaper(optedIn);
  for (const namespace of [optedIn, plain]) {
    await createSandbox(namespace, 'reaper', { worktree: 'wt-1', onNode: false });
    const stored = (await getSandbox(namespace, 'reaper')) as unknown as Sandbox | undefined;
    if (stored === undefined) throw new Error('the Sandbox was not stored');
    sandboxes.set(namespace, stored);
  }
});

type Mode = 'Privileged' | 'SameUser';
/** The pod the operator builds for the namespace's sandbox with the reaper in `mode`, then `change`d. */
function operatorPod(namespace: string, mode: Mode, change: (reaper: V1Container, pod: V1Pod) => void) {
  const base = sandboxes.get(namespace);
  if (base === undefined) throw new Error(`no sandbox in ${namespace}`);
  const podTemplate = structuredClone(base.spec.podTemplate);
  // SameUser needs the agent's user pinned (mode.ts).
  if (mode === 'SameUser')
    podTemplate.spec = { ...podTemplate.spec, securityContext: { runAsUser: 1000, runAsGroup: 1000 } };
  const sandbox = {
    ...base,
    spec: { ...base.spec, podTemplate, shellReaper: { enabled: true, gracePeriodSeconds: 5, mode } },
  } as Sandbox;
  const pod = sandboxPod(sandbox, 0, {
    image: IMAGE,
    serviceAccountName: 'reaper',
    podSecurityLevel: () => (mode === 'Privileged' ? 'privileged' : undefined),
    privilegedReaperAllowed: () => mode === 'Privileged',
  });
  const reaper = pod.spec?.initContainers?.[0];
  if (reaper?.name !== 'shell-reaper') throw new Error('no reaper was injected');
  change(reaper, pod);
  return pod;
}

let serial = 0;
/** Creates the pod, under a name of its own, as the operator's identity: 'allowed', or the refusal. */
function create(pod: V1Pod, namespace: string): Promise<string> {
  pod.metadata = { ...pod.metadata, name: `reaper-${String(++serial)}` };
  return kubeConfig({ restricted: true })
    .makeApiClient(CoreV1Api)
    .createNamespacedPod({ namespace, body: pod })
    .then(
      () => 'allowed',
      (error: unknown) => String((error as { body?: unknown }).body ?? error),
    );
}

describe('the reaper’s root mode', () => {
  it('is admitted where an administrator allowed it, and refused elsewhere at the namespace’s level', async () => {
    expect(
      await create(
        operatorPod(optedIn, 'Privileged', () => undefined),
        optedIn,
      ),
    ).toBe('allowed');
    const refused = await create(
      operatorPod(plain, 'Privileged', () => undefined),
      plain,
    );
    expect(refused).toContain('spec.initContainers[shell-reaper].securityContext.capabilities.add');
    expect(refused).toContain('at pod-template level baseline');
  });

  it('is not needed for the SameUser reaper, admitted in a namespace no administrator opted in', async () =>
    expect(
      await create(
        operatorPod(plain, 'SameUser', () => undefined),
        plain,
      ),
    ).toBe('allowed'));
});

describe('the reaper’s shape', () => {
  it.each<[string, (reaper: V1Container, pod: V1Pod) => void, string]>([
    ['another command', (r) => (r.command = ['node', '-e', 'process.exit(0)']), 'runs only the command'],
    ['arguments', (r) => (r.args = ['--inspect']), 'runs only the command'],
    [
      'a working directory',
      (r) => (r.workingDir = '/var/run/sandbox-reaper-output'),
      'runs only the command',
    ],
    [
      'NODE_OPTIONS',
      (r) => r.env?.push({ name: 'NODE_OPTIONS', value: '--import=data:text/javascript,1' }),
      'has only variables named SANDBOX_REAPER_*',
    ],
    [
      'a variable from a secret',
      (r) => r.env?.push({ name: 'SANDBOX_REAPER_X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }),
      'has only variables named SANDBOX_REAPER_*',
    ],
    [
      'a postStart hook',
      (r) => (r.lifecycle = { postStart: { exec: { command: ['sh'] } } }),
      'no livenessProbe',
    ],
    [
      'another startup probe',
      (r) => (r.startupProbe = { exec: { command: ['sh', '-c', 'true'] } }),
      'has only the startup probe the operator injects',
    ],
    [
      'a volume mounted over its bundle',
      (r, p) => {
        p.spec?.volumes?.push({ name: 'bundle', configMap: { name: 'bundle' } });
        r.volumeMounts?.push({ name: 'bundle', mountPath: '/app/dist/bundle' });
      },
      'mounts only its own volumes at their paths',
    ],
    [
      'its own volume elsewhere',
      (r) => (r.volumeMounts![1]!.mountPath = '/app/dist'),
      'mounts only its own volumes at their paths',
    ],
    [
      'its scratch volume from a ConfigMap',
      (_, p) => {
        const tmp = p.spec?.volumes?.find((v) => v.name === 'sandbox-reaper-tmp');
        if (tmp) Object.assign(tmp, { emptyDir: undefined, configMap: { name: 'planted' } });
      },
      'are emptyDirs',
    ],
  ])('refuses %s, in either mode', async (what, change, message) => {
    for (const [namespace, mode] of [
      [optedIn, 'Privileged'],
      [plain, 'SameUser'],
    ] as const) {
      const refused = await create(operatorPod(namespace, mode, change), namespace);
      expect(refused, `${what} (${mode})`).toContain(message);
    }
  });
});

describe('the admission parameters', () => {
  const PARAMS = [
    'reaperImages',
    'reaperExtraEnv',
    'reaperExtraMountPaths',
    'sandboxPodsOnHostNetwork',
  ] as const;
  type Param = (typeof PARAMS)[number];
  const set = (name: Param, value: string | undefined) =>
    core().patchNamespacedConfigMap({
      name: ADMISSION_PARAMS,
      namespace: DEFAULT_NAMESPACE,
      body: [{ op: value === undefined ? 'remove' : 'add', path: `/data/${name}`, value }],
    });
  const before = new Map<Param, string | undefined>();
  beforeAll(async () => {
    const { data } = await core().readNamespacedConfigMap({
      name: ADMISSION_PARAMS,
      namespace: DEFAULT_NAMESPACE,
    });
    for (const name of PARAMS) before.set(name, data?.[name]);
  });
  afterAll(async () => {
    for (const name of PARAMS) if (before.get(name) !== undefined) await set(name, before.get(name));
  });
  /** Polls until the parameters the API server's policy reads give `expected` for the pod's creation. */
  const settles = (make: () => V1Pod, namespace: string, done: (outcome: string) => boolean) =>
    eventually('the parameters apply', async () => {
      const outcome = await create(make(), namespace);
      return done(outcome) ? outcome : pending(outcome);
    });

  it('reaperImages: the reaper runs only an image it lists, when it lists any', async () => {
    const sameUser = () => operatorPod(plain, 'SameUser', () => undefined);
    await set('reaperImages', `registry.example/operator:2,${IMAGE}`);
    expect(await settles(sameUser, plain, (o) => o === 'allowed')).toBe('allowed');
    await set('reaperImages', 'registry.example/operator:2');
    const refused = await settles(sameUser, plain, (o) => o !== 'allowed');
    expect(refused).toContain(
      'runs only an image the admission parameter reaperImages lists (registry.example/operator:2)',
    );
    await set('reaperImages', before.get('reaperImages') ?? '');
  });

  it('reaperImages: an operator injecting an image it leaves out says so once at start, with the fix', async () => {
    await set('reaperImages', 'registry.example/operator:2');
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const operator = startOperator(plain, ['--sidecar-image', IMAGE], undefined, undefined, log);
    try {
      await operator.port; // the check runs before the endpoints listen
      const said = lines.filter((line) => line.includes(`this operator injects ${IMAGE}`));
      expect(said).toHaveLength(1);
      expect(said[0]).toContain('"level":50');
      expect(said[0]).toContain('kubectl patch configmap');
    } finally {
      await operator.stop();
      await set('reaperImages', before.get('reaperImages') ?? '');
    }
  });

  it('reaperExtraEnv and reaperExtraMountPaths: what a cluster’s webhook adds to every container (EKS pod identity)', async () => {
    const TOKEN_DIR = '/var/run/secrets/eks.amazonaws.com/serviceaccount';
    const withIdentity = () =>
      operatorPod(optedIn, 'Privileged', (reaper, pod) => {
        reaper.env?.push({ name: 'AWS_ROLE_ARN', value: 'arn:aws:iam::111122223333:role/agent' });
        pod.spec?.volumes?.push({
          name: 'aws-iam-token',
          projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'sts.amazonaws.com' } }] },
        });
        reaper.volumeMounts?.push({ name: 'aws-iam-token', mountPath: TOKEN_DIR, readOnly: true });
      });
    await set('reaperExtraEnv', '');
    await set('reaperExtraMountPaths', '');
    expect(await settles(withIdentity, optedIn, (o) => o !== 'allowed')).toContain(
      'has only variables named SANDBOX_REAPER_*, or one of KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT',
    );
    await set('reaperExtraEnv', 'AWS_ROLE_ARN,AWS_WEB_IDENTITY_TOKEN_FILE');
    expect(await settles(withIdentity, optedIn, (o) => !o.includes('has only variables'))).toContain(
      'other volumes only at a path the admission parameter reaperExtraMountPaths lists ()',
    );
    await set('reaperExtraMountPaths', TOKEN_DIR);
    expect(await settles(withIdentity, optedIn, (o) => o === 'allowed')).toBe('allowed');
    // Never another volume over one of the reaper's own paths, even listed.
    await set('reaperExtraMountPaths', `${TOKEN_DIR},/var/lib/sandbox-reaper`);
    const planted = () =>
      operatorPod(optedIn, 'Privileged', (reaper, pod) => {
        pod.spec?.volumes?.push({ name: 'planted', configMap: { name: 'journal' } });
        const state = reaper.volumeMounts?.find((m) => m.name === 'sandbox-reaper-state');
        if (state) state.name = 'planted';
      });
    expect(await settles(planted, optedIn, (o) => o !== 'allowed')).toContain(
      'mounts only its own volumes at their paths',
    );
    await set('reaperExtraEnv', before.get('reaperExtraEnv') ?? '');
    await set('reaperExtraMountPaths', before.get('reaperExtraMountPaths') ?? '');
  });

  it('sandboxPodsOnHostNetwork: a sandbox pod on the host network only where the cluster puts it there', async () => {
    // What the local control plane's real node does to every reaper pod; a leaked token's request looks the same.
    const onHost = () =>
      operatorPod(plain, 'SameUser', (_, pod) => pod.spec && (pod.spec.hostNetwork = true));
    await set('sandboxPodsOnHostNetwork', '');
    expect(await settles(onHost, plain, (o) => o !== 'allowed')).toContain('spec.hostNetwork');
    await set('sandboxPodsOnHostNetwork', 'allowed');
    expect(await settles(onHost, plain, (o) => o === 'allowed')).toBe('allowed');
    await set('sandboxPodsOnHostNetwork', before.get('sandboxPodsOnHostNetwork') ?? '');
  });
});
