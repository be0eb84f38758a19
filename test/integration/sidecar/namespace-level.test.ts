/**
 * The operator fits the shell reaper's mode to its namespace's PodSecurity level (issue 12), read from a
 * cached watch of Namespaces: in a `restricted` namespace a template that pins its user gets the SameUser
 * sidecar (and PodSecurity admission admits the pod); one that does not is refused before any pod is sent,
 * since `Auto` never chooses the root sidecar (issue 26 #2). The Privileged mode, asked for by name, needs
 * the namespace's `privileged` level and an administrator's opt-in label; the label lets that sandbox's pod
 * through without waiting out its backoff.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, SANDBOX, VERSION } from '../../../operator/api/names.ts';
import type { ControllerPorts } from '../../../operator/controller/ports.ts';
import { JSON_PATCH } from '../../harness/kube.ts';
import { kwokNodeName } from '@sandbox-operator/local-cluster';
import {
  core,
  customObjects,
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from '../controller/operator.ts';

const namespace = `psa-level-${randomBytes(4).toString('hex')}`;
const ENFORCE = 'pod-security.kubernetes.io/enforce';
let operator: RunningOperator;
/** Every pod the operator asked the API server to create, and how each ended. */
const creates: { pod: V1Pod; outcome: string }[] = [];

const observeCreates = (ports: ControllerPorts): ControllerPorts => ({
  ...ports,
  pods: {
    ...ports.pods,
    async create(pod) {
      try {
        const result = await ports.pods.create(pod);
        creates.push({ pod, outcome: result === 'Created' ? result : 'Taken' });
        return result;
      } catch (error) {
        creates.push({ pod, outcome: error instanceof Error ? error.message : String(error) });
        throw error;
      }
    },
  },
});

/** A template that meets `restricted` by itself; `pinned` adds the one user every container runs as. */
async function createReaperSandbox(name: string, pinned: boolean, mode?: 'Privileged'): Promise<void> {
  await customObjects().createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SANDBOX.plural,
    body: {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: SANDBOX.kind,
      metadata: { name, namespace },
      spec: {
        shellReaper: { enabled: true, ...(mode === undefined ? {} : { mode }) },
        podTemplate: {
          spec: {
            nodeName: kwokNodeName(0),
            securityContext: {
              runAsNonRoot: true,
              seccompProfile: { type: 'RuntimeDefault' },
              ...(pinned ? { runAsUser: 1000, runAsGroup: 1000 } : {}),
            },
            containers: [
              {
                name: 'agent',
                image: 'registry.example/agent:1',
                securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              },
            ],
          },
        },
      },
    },
  });
}

const OPT_IN_LABEL = 'sandbox.agents.dev/shell-reaper-privileged';
const OPT_IN = `${OPT_IN_LABEL}=allowed`;

type Condition = { type?: string; status?: string; reason?: string; message?: string };
/** The Sandbox's Misconfigured condition, if it has one. */
async function misconfigured(name: string): Promise<Condition | undefined> {
  const sbx = (await customObjects().getNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SANDBOX.plural,
    name,
  })) as { status?: { conditions?: Condition[] } };
  return sbx.status?.conditions?.find((c) => c.type === 'Misconfigured');
}

const reaperOf = (pod: V1Pod | undefined) =>
  pod?.spec?.initContainers?.find((c) => c.name === 'shell-reaper');
const createsOf = (sandbox: string) => creates.filter((c) => c.pod.metadata?.name === `${sandbox}-0`);
/** The pod, or undefined when there is none (a 404): any other failure is thrown, never taken for "no pod". */
const livePod = async (name: string): Promise<V1Pod | undefined> => {
  try {
    return await core().readNamespacedPod({ namespace, name });
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
};

beforeAll(async () => {
  await core().createNamespace({
    body: { metadata: { name: namespace, labels: { [ENFORCE]: 'restricted' } } },
  });
  await grantOperatorRbac();
  operator = startOperator(namespace, [], observeCreates);
});
afterAll(async () => {
  await operator.stop();
  await core().deleteNamespace({ name: namespace });
});

describe('the shell reaper’s mode and the namespace’s PodSecurity level', { timeout: 120_000 }, () => {
  it('in a restricted namespace: SameUser for a pinned user (admitted); no pod at all for an unpinned one', async () => {
    await createReaperSandbox('pinned', true);
    await createReaperSandbox('unpinned', false);
    const pod = await eventually(
      'the pinned sandbox’s pod',
      async () => (await livePod('pinned-0')) ?? pending(creates),
    );
    expect(reaperOf(pod)?.securityContext).toMatchObject({
      runAsUser: 1000,
      runAsGroup: 1000,
      runAsNonRoot: true,
    });
    expect(reaperOf(pod)?.securityContext?.capabilities?.add).toBeUndefined();
    // The unpinned sandbox has been reconciled (its finalizer is added first) and retried meanwhile.
    await eventually('the unpinned sandbox reconciled', async () => {
      const sbx = (await customObjects().getNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SANDBOX.plural,
        name: 'unpinned',
      })) as { status?: { phase?: string } };
      return sbx.status?.phase !== undefined ? true : pending(sbx.status);
    });
    // Refused by the operator, with the fix, before any request: PodSecurity admission never had to say no.
    expect(createsOf('unpinned').map((c) => c.outcome)).toEqual([]);
    expect(await livePod('unpinned-0')).toBeUndefined();
  });

  it('gives the root sidecar only to a Sandbox that asks for it, once an administrator opted the namespace in', async () => {
    const label = (key: string) => `/metadata/labels/${key.replace('/', '~1')}`;
    await core().patchNamespace(
      { name: namespace, body: [{ op: 'replace', path: label(ENFORCE), value: 'privileged' }] },
      JSON_PATCH,
    );
    await createReaperSandbox('root', false, 'Privileged');
    // A privileged level alone is not the administrator's opt-in: the Sandbox says what to do instead.
    const refusal = await eventually('the root sandbox refused', async () => {
      const condition = await misconfigured('root');
      return condition?.message?.includes('has not been opted in') === true ? condition : pending(condition);
    });
    expect(refusal).toMatchObject({ status: 'True', reason: 'ShellReaperModeRefused' });
    expect(refusal.message).toContain(OPT_IN);
    await core().patchNamespace(
      { name: namespace, body: [{ op: 'add', path: label(OPT_IN_LABEL), value: 'allowed' }] },
      JSON_PATCH,
    );
    const pod = await eventually(
      'the root sandbox’s pod',
      async () => (await livePod('root-0')) ?? pending(creates.map((c) => c.outcome)),
      30_000,
    );
    expect(reaperOf(pod)?.securityContext).toMatchObject({ runAsUser: 0 });
    expect(reaperOf(pod)?.securityContext?.capabilities?.add).toEqual([
      'KILL',
      'SYS_PTRACE',
      'DAC_OVERRIDE',
      'CHOWN',
    ]);
    // Auto never chooses root: the unpinned sandbox, requeued by both label changes, still has no pod.
    expect(createsOf('unpinned').map((c) => c.outcome)).toEqual([]);
    expect(await livePod('unpinned-0')).toBeUndefined();
    expect((await misconfigured('unpinned'))?.message).toContain('Auto never runs the sidecar as root');
  });
});
