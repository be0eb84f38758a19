/**
 * The API server restarts mid-run, on a control plane of this file's own: every watch breaks, the operator
 * backs off, lists again and carries on — a blocked deletion whose blocker is forgotten right after the
 * restart still completes, and new sandboxes are still reconciled.
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxDeleter, setOperatorUsers } from '../../harness/admission.ts';
import { API_VERSION, GROUP, SANDBOX, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import type { Sandbox } from '../../../operator/api/objects.ts';
import { loadConfig } from '../../../operator/controller/wiring/config.ts';
import { runManager } from '../../../operator/controller/wiring/manager.ts';
import { startLocalCluster, type LocalCluster } from '@sandbox-operator/local-cluster';
import { sandboxManifest, sandboxSeen } from './fixtures.ts';
import { eventually, pending } from './operator.ts';

const namespace = 'restart';
let cluster: LocalCluster;
let custom: CustomObjectsApi;
/**
 * The user's writes: admin is this file's operator, which deletes a Sandbox only when its cleanup fenced it and
 * never writes a SessionReference (the operator bounds).
 */
let deleter: CustomObjectsApi;
let core: CoreV1Api;
const stop = new AbortController();
let operator: Promise<void>;
let port: Promise<number>;

beforeAll(async () => {
  cluster = await startLocalCluster({
    kwok: false,
    controllerManager: false,
    logger: pino({ level: 'warn' }),
  });
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  custom = kc.makeApiClient(CustomObjectsApi);
  core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  // This file's operator runs as admin: let admin delete sandbox pods.
  await setOperatorUsers(core, ['admin']);
  deleter = await sandboxDeleter(kc);
  const config = loadConfig(
    [
      '--namespace',
      namespace,
      '--leader-elect',
      'false',
      '--probe-bind',
      '127.0.0.1:0',
      '--metrics-bind',
      '127.0.0.1:0',
      '--blocked-recheck-ms',
      '60000',
    ],
    {},
  );
  let listening: (p: number) => void = () => undefined;
  port = new Promise((resolve) => (listening = resolve));
  operator = runManager({
    kubeConfig: kc,
    config,
    log: pino({ level: 'warn' }),
    signal: stop.signal,
    onListening: listening,
  });
}, 300_000);
afterAll(async () => {
  stop.abort();
  await operator;
  await cluster.stop();
});

const sandbox = (name: string) => sandboxManifest(namespace, name, { worktree: 'wt-1', onNode: false });
const reference = (name: string, sandboxName: string, worktree: string) => ({
  apiVersion: API_VERSION,
  kind: SESSION_REFERENCE.kind,
  metadata: { name, namespace },
  spec: { sandbox: sandboxName, session: `workspace_${name}`, worktree, route: 'r', role: 'Root' },
});
const at = (plural: string) => ({ group: GROUP, version: VERSION, namespace, plural });
/** The Sandbox, or undefined once it is gone (a 404); any other failure (the API server down) is thrown. */
const get = async (name: string): Promise<Sandbox | undefined> => {
  try {
    return (await custom.getNamespacedCustomObject({ ...at(SANDBOX.plural), name })) as Sandbox;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
};
/** Waits for the Sandbox `wanted` says (or its going); on timeout says its phase and verdict as last seen. */
const until = (what: string, name: string, wanted: (sandbox: Sandbox | undefined) => boolean, ms?: number) =>
  eventually(
    what,
    async () => {
      const sandbox = await get(name);
      return wanted(sandbox) ? true : pending(sandboxSeen(sandbox));
    },
    ms,
  );

describe('an API server restart', () => {
  it('is survived: watches come back and decisions go on', async () => {
    await deleter.createNamespacedCustomObject({ ...at(SANDBOX.plural), body: sandbox('shared') });
    await deleter.createNamespacedCustomObject({
      ...at(SESSION_REFERENCE.plural),
      body: reference('blocker', 'shared', 'wt-2'),
    });
    await until('shared counted', 'shared', (s) => s?.status?.references?.foreign === 1);
    await deleter.deleteNamespacedCustomObject({ ...at(SANDBOX.plural), name: 'shared' });
    await until('blocked', 'shared', (s) => s?.status?.phase === 'Blocked');

    await cluster.restartApiServer();
    // Forgotten while the operator's watches are still down: only a relist can tell it.
    await deleter.deleteNamespacedCustomObject({ ...at(SESSION_REFERENCE.plural), name: 'blocker' });
    await until('shared destroyed after the restart', 'shared', (s) => s === undefined, 60_000);

    await deleter.createNamespacedCustomObject({ ...at(SANDBOX.plural), body: sandbox('after') });
    await until('new sandbox reconciled', 'after', (s) => s?.status?.reconciliation?.marker === true, 60_000);
    // The marker is written before any pod exists (status first), so wait for the pod, then check it is the only one.
    const pods = await eventually('the new sandbox’s pod', async () => {
      const names = (await core.listNamespacedPod({ namespace })).items.map((p) => p.metadata?.name);
      return names.length > 0 ? names : pending({ pods: names });
    });
    expect(pods).toEqual(['after-0']);
    const metrics = await (await fetch(`http://127.0.0.1:${await port}/metrics`)).text();
    expect(metrics).toMatch(
      /sandbox_operator_watch_restarts_total\{resource="sessionreferences",reason="error"\} [1-9]/,
    );
  });
});
