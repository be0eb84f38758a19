// The chart as a platform team installs it, on the real node: `helm install` runs the operator image
// (built from the Dockerfile) as a Deployment under the chart's ServiceAccount, its probes pass and it
// holds the leader Lease (a replacement pod takes it over); an exclusive deletion stops the sandbox's
// containers on the host, and a blocked one leaves them running until the foreign reference goes.
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cacheRoot, ensureBinaries, kwokNodeName } from '@sandbox-operator/local-cluster';
import { operatorImageOnNode } from '@sandbox-operator/local-cluster/images/on-node';
import { freePort } from '@sandbox-operator/local-cluster/net';
import { eventually, pending } from '../../integration/controller/operator.ts';
import { kubectl, kubectlOk } from '../../harness/kube.ts';
import { hostProcesses, realNodeToleration, type RealNodeInfo } from './node.ts';

const run = promisify(execFile);
const CHART = fileURLToPath(new URL('../../../charts/sandbox-operator/', import.meta.url));
const RELEASE = { name: 'sandbox-operator', namespace: 'sandbox-system' }; // the identity crds/policies/ trusts
const tenant = `real-tenant-${randomBytes(3).toString('hex')}`;
const node = inject('realNode');
const suite = describe.skipIf(node === null);

async function helm(args: readonly string[]): Promise<string> {
  const { helm: binary } = await ensureBinaries({ tools: ['helm'] });
  const { stdout } = await run(binary, [...args, '--kubeconfig', inject('kubeconfig')], {
    maxBuffer: 8 << 20,
  });
  return stdout;
}

const json = async <T>(args: string[]): Promise<T> =>
  JSON.parse(await kubectlOk([...args, '-o', 'json'])) as T;
type Pod = {
  metadata: { name: string };
  spec: { serviceAccountName?: string; nodeName?: string };
  status: { conditions?: { type: string; status: string }[] };
};

async function operatorPods(): Promise<Pod[]> {
  const list = await json<{ items: Pod[] }>([
    'get',
    'pods',
    '-n',
    RELEASE.namespace,
    '-l',
    'app.kubernetes.io/name=sandbox-operator',
  ]);
  return list.items.filter((pod) =>
    pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
}

/** A Sandbox of the tenant whose agent runs `marker` on the real node; `reaped`: with the shell reaper. */
function sandbox(name: string, real: RealNodeInfo, marker: string, reaped = false): string {
  const reaper = reaped
    ? {
        shellReaper: { enabled: true, gracePeriodSeconds: 2 },
        // Auto takes SameUser for a template that pins its user (docs/sidecar.md).
        securityContext: { runAsUser: 1000, runAsGroup: 1000 },
      }
    : undefined;
  return JSON.stringify({
    apiVersion: 'sandbox.agents.dev/v1alpha1',
    kind: 'Sandbox',
    metadata: { name, namespace: tenant },
    spec: {
      worktree: `wt-${name}`,
      podTemplate: {
        spec: {
          ...(reaper ? { securityContext: reaper.securityContext } : {}),
          nodeSelector: { 'kubernetes.io/hostname': real.name },
          tolerations: [realNodeToleration],
          containers: [
            {
              name: 'agent',
              image: real.shellImage,
              imagePullPolicy: 'Never',
              command: ['sh', '-c', 'while true; do sleep 1; done', marker],
            },
          ],
        },
      },
      ...(reaper ? { shellReaper: reaper.shellReaper } : {}),
    },
  });
}

function installArgs(real: RealNodeInfo, repository: string, tag: string, port: number): string[] {
  return [
    'upgrade',
    '--install',
    RELEASE.name,
    CHART,
    '-n',
    RELEASE.namespace,
    '--create-namespace',
    '--take-ownership',
    '--set',
    `image.repository=${repository}`,
    '--set',
    `image.tag=${tag}`,
    '--set',
    'image.pullPolicy=Never',
    // On the host network (the local policy puts API clients there): a port no one else holds.
    '--set',
    `metrics.port=${String(port)}`,
    '--set-json',
    `nodeSelector=${JSON.stringify({ 'kubernetes.io/hostname': real.name })}`,
    '--set-json',
    `tolerations=${JSON.stringify([realNodeToleration])}`,
    '--set',
    `shellReaper.namespaces={${tenant}}`,
    // The release takes over the harness's admission parameters: keep the kwok nodes that later tests'
    // Sandbox templates name (the local control plane allows them, tools/local-cluster/crds.ts).
    '--set',
    `podTemplatePolicy.allowedNodeNames={${[0, 1, 2].map(kwokNodeName).join(',')}}`,
    // This node's loopback policy puts sandbox pods on the host network after the operator made them.
    '--set',
    'admissionPolicy.sandboxPodsOnHostNetwork=true',
    '--wait',
    '--timeout',
    '150s',
  ];
}

suite('the chart on the real node', () => {
  let image = '';
  beforeAll(async () => {
    const real = node as RealNodeInfo;
    image = await operatorImageOnNode(cacheRoot(), real.containerdSocket, () => undefined);
    const [repository, tag] = image.split(':') as [string, string];
    await kubectlOk(['create', 'namespace', tenant]);
    await helm(installArgs(real, repository, tag, await freePort())).catch(async (error: unknown) => {
      const seen = await kubectl(['get', 'deploy,rs,pods,events', '-n', RELEASE.namespace, '-o', 'wide']);
      throw new Error(`helm install failed; in ${RELEASE.namespace}:\n${seen.stdout}${seen.stderr}`, {
        cause: error,
      });
    });
  }, 600_000);

  afterAll(async () => {
    // The release adopted what the harness installed (crds/policies/, the operator's RBAC); keep those.
    await kubectl(['delete', 'deployment', RELEASE.name, '-n', RELEASE.namespace, '--wait=true']);
    // Its metrics Service (on this run's free port) and helm's record of the release would meet the next
    // install of the same release name: the Service's two ports would both be named http.
    await kubectl([
      'delete',
      'service',
      `${RELEASE.name}-metrics`,
      '-n',
      RELEASE.namespace,
      '--ignore-not-found',
    ]);
    await kubectl(['delete', 'secret', '-n', RELEASE.namespace, '-l', `owner=helm,name=${RELEASE.name}`]);
    await kubectl(['delete', 'namespace', tenant, '--wait=false']);
    // The release set the parameters' reaperImages to its own image; the harness's (crds/policies/) lists none,
    // and later tests run their operators with other sidecar images.
    await kubectlOk([
      'patch',
      'configmap',
      `${RELEASE.name}-admission`,
      '-n',
      RELEASE.namespace,
      '--type=merge',
      '-p',
      JSON.stringify({ data: { reaperImages: '' } }),
    ]);
  });

  it('runs the operator as a Deployment under its ServiceAccount, probes passing, holding the leader Lease', async () => {
    const [pod] = await operatorPods();
    expect(pod?.spec.serviceAccountName).toBe(RELEASE.name);
    expect(pod?.spec.nodeName).toBe((node as RealNodeInfo).name);
    expect(hostProcesses('dist/bundle/main.mjs').length).toBeGreaterThan(0);
    const holder = async () =>
      (
        await kubectlOk([
          'get',
          'lease',
          RELEASE.name,
          '-n',
          RELEASE.namespace,
          '-o',
          'jsonpath={.spec.holderIdentity}',
        ])
      ).trim();
    const first = await eventually('a leader', async () => (await holder()) || undefined, 60_000);
    expect(await kubectlOk(['logs', '-n', RELEASE.namespace, pod?.metadata.name ?? ''])).toContain(
      'became leader',
    );

    // The leader's pod goes: its replacement takes the Lease over and becomes Ready.
    await kubectlOk(['delete', 'pod', pod?.metadata.name ?? '', '-n', RELEASE.namespace, '--wait=true']);
    const second = await eventually(
      'a new leader',
      async () => {
        const now = await holder();
        return now !== '' && now !== first ? now : pending({ holder: now, first });
      },
      120_000,
    );
    expect(second).not.toBe(first);
    await eventually(
      'the replacement Ready',
      async () => ((await operatorPods()).length > 0 ? true : undefined),
      120_000,
    );
  });

  it('runs a sandbox with the shell reaper: the release’s admission parameters admit the reaper of its image', async () => {
    const real = node as RealNodeInfo;
    const images = await kubectlOk([
      'get',
      'configmap',
      `${RELEASE.name}-admission`,
      '-n',
      RELEASE.namespace,
      '-o',
      'jsonpath={.data.reaperImages}',
    ]);
    expect(images).toBe(image);
    await kubectlOk(['apply', '-f', '-'], { input: sandbox('reaped', real, `reaped-${tenant}`, true) });
    await eventually(
      'the reaper’s sandbox pod Ready',
      async () => {
        const ready = await kubectl([
          'get',
          'pod',
          'reaped-0',
          '-n',
          tenant,
          '-o',
          'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
        ]);
        const misconfigured = await kubectl([
          'get',
          'sandbox',
          'reaped',
          '-n',
          tenant,
          '-o',
          'jsonpath={.status.conditions[?(@.type=="Misconfigured")].message}',
        ]);
        return ready.stdout === 'True'
          ? true
          : pending({ ready: ready.stdout, misconfigured: misconfigured.stdout });
      },
      180_000,
    );
    const pod = JSON.parse(await kubectlOk(['get', 'pod', 'reaped-0', '-n', tenant, '-o', 'json'])) as {
      spec: { initContainers?: { name: string; image: string }[] };
    };
    expect(pod.spec.initContainers?.find((c) => c.name === 'shell-reaper')?.image).toBe(image);
    await kubectlOk(['delete', 'sandbox', 'reaped', '-n', tenant, '--wait=false']);
  });

  it('stops the containers of an exclusive deletion; a blocked deletion leaves them running', async () => {
    const real = node as RealNodeInfo;
    const exclusive = `exclusive-${tenant}`;
    const shared = `shared-${tenant}`;
    await kubectlOk(['apply', '-f', '-'], { input: sandbox('exclusive', real, exclusive) });
    await kubectlOk(['apply', '-f', '-'], { input: sandbox('shared', real, shared) });
    await kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'sandbox.agents.dev/v1alpha1',
        kind: 'SessionReference',
        metadata: { name: 'board', namespace: tenant },
        spec: {
          sandbox: 'shared',
          session: 'board_1',
          worktree: 'wt-main',
          route: 'r/wt-main/board_1',
          role: 'Board',
          state: 'Attached',
        },
      }),
    });
    await eventually(
      'both sandboxes running on the host',
      () =>
        Promise.resolve(
          hostProcesses(exclusive).length > 0 && hostProcesses(shared).length > 0 ? true : undefined,
        ),
      120_000,
    );

    await kubectlOk(['delete', 'sandbox', 'exclusive', '-n', tenant, '--wait=false']);
    await kubectlOk(['delete', 'sandbox', 'shared', '-n', tenant, '--wait=false']);
    await eventually(
      'the exclusive sandbox gone, its containers ended',
      async () => {
        const left = await kubectlOk([
          'get',
          'sandbox',
          'exclusive',
          '-n',
          tenant,
          '--ignore-not-found',
          '-o',
          'name',
        ]);
        const processes = hostProcesses(exclusive);
        return left.trim() === '' && processes.length === 0
          ? true
          : pending({ left: left.trim(), processes });
      },
      120_000,
    );
    const blocked = await eventually(
      'the shared deletion blocked',
      async () => {
        const phase = await kubectlOk([
          'get',
          'sandbox',
          'shared',
          '-n',
          tenant,
          '-o',
          'jsonpath={.status.phase}',
        ]);
        return phase === 'Blocked' ? phase : pending({ phase });
      },
      60_000,
    );
    expect(blocked).toBe('Blocked');
    expect(hostProcesses(shared).length).toBeGreaterThan(0); // still running, not only still in the API

    await kubectlOk(['delete', 'sessionreference', 'board', '-n', tenant]);
    await eventually(
      "the released sandbox's containers ended",
      () => Promise.resolve(hostProcesses(shared).length === 0 ? true : undefined),
      120_000,
    );
  });
});
