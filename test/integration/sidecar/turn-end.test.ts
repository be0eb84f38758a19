/**
 * The sidecar as a process against the real control plane: a `status.turn` update on a SessionReference
 * of its sandbox makes it retire that session's shell groups, record `status.shells` and an Event. It runs
 * as a ServiceAccount bound only to the Role docs/sidecar.md documents, with a token bound to its pod
 * `sbx-a-0` as the kubelet projects one: admission narrows that Role to the pod's sandbox
 * (operator/api/reaper-rights.ts, installed with crds/policies/), so a token bound to no pod is refused.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, GROUP, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import { parseSessionReference } from '../../../operator/api/parse.ts';
import {
  createReaperClient,
  spawnRegisteredShell,
  type SpawnedShell,
} from '../../../operator/sidecar/host/index.ts';
import { accountTokenKubeConfig, kubeConfig, testNamespace } from '../../harness/kube.ts';
import { pending } from '../../harness/eventually.ts';
import { killMarked, liveMembers, waitFor } from '../../process/sidecar/fixtures/process-fixtures.ts';

/** For a wait: true once the process group of `pid` has no live member, else the members left. */
async function groupEmpty(pid: number) {
  const members = await liveMembers(pid);
  return members.length === 0 ? true : pending({ members });
}

const REPO = resolve(import.meta.dirname, '../../..');
const namespace = testNamespace('sidecar');
const SANDBOX = 'sbx-a';
const ACCOUNT = 'shell-reaper';
const prefix = `it${process.pid}`;

/** The Role of docs/sidecar.md: read its sandbox's references, write their status.shells, create Events. */
const ROLE_RULES = [
  { apiGroups: [GROUP], resources: [SESSION_REFERENCE.plural], verbs: ['list', 'watch'] },
  { apiGroups: [GROUP], resources: [`${SESSION_REFERENCE.plural}/status`], verbs: ['patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];

const objects = () => kubeConfig().makeApiClient(CustomObjectsApi);
const ref = { group: GROUP, version: VERSION, plural: SESSION_REFERENCE.plural };

async function createReference(name: string, sandbox: string, session: string, role: string) {
  await objects().createNamespacedCustomObject({
    ...ref,
    namespace,
    body: {
      apiVersion: API_VERSION,
      kind: SESSION_REFERENCE.kind,
      metadata: { name, namespace },
      spec: {
        sandbox,
        session,
        route: 'shared-control-v1/test',
        role,
        ...(role === 'Subagent' ? { parentSession: `${prefix}-parent` } : {}),
      },
    },
  });
}

/** What the agent host does at a turn boundary: a merge patch of status.turn. */
async function writeTurn(name: string, turn: object) {
  await writeStatus(name, { turn });
}

async function writeStatus(name: string, status: object) {
  await objects().patchNamespacedCustomObjectStatus(
    { ...ref, namespace, name, body: { status } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

async function reference(name: string) {
  const parsed = parseSessionReference(
    await objects().getNamespacedCustomObject({ ...ref, namespace, name }),
  );
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}

describe('the sidecar against the control plane', { timeout: 120_000 }, () => {
  let dir: string;
  let sidecar: ChildProcess | undefined;
  const log: string[] = [];
  /** Waits for a line of the sidecar's log: it reaches us through its stdout pipe, after what it answered. */
  const sidecarSaid = (text: string) =>
    waitFor(`the sidecar to log "${text}"`, () =>
      Promise.resolve(log.join('').includes(text) ? true : pending({ lines: log.length })),
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reaper-it-'));
    const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({ namespace, body: { metadata: { name: ACCOUNT }, rules: ROLE_RULES } });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: ACCOUNT },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: ACCOUNT },
        subjects: [{ kind: 'ServiceAccount', name: ACCOUNT, namespace }],
      },
    });
    const core = kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: ACCOUNT } } });
    // The pod is never scheduled: a token bound to it needs only the object.
    const pod = await core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name: `${SANDBOX}-0` },
        spec: {
          serviceAccountName: ACCOUNT,
          containers: [{ name: 'agent', image: 'registry.invalid/agent:1' }],
        },
      },
    });
    const reaper = await accountTokenKubeConfig(namespace, ACCOUNT, {
      name: `${SANDBOX}-0`,
      uid: pod.metadata?.uid ?? '',
    });
    await writeFile(join(dir, 'kubeconfig'), reaper.exportConfig());

    await createReference('child', SANDBOX, `${prefix}-child`, 'Subagent');
    await createReference('parent', SANDBOX, `${prefix}-parent`, 'Root');
    await createReference('elsewhere', 'sbx-b', `${prefix}-elsewhere`, 'Subagent');

    sidecar = startSidecarProcess();
  });

  const startSidecarProcess = (): ChildProcess => {
    const started = spawn(process.execPath, ['--import', 'tsx', 'operator/cli/sidecar.ts'], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        KUBECONFIG: join(dir, 'kubeconfig'),
        SANDBOX_REAPER_NAMESPACE: namespace,
        SANDBOX_REAPER_SANDBOX: SANDBOX,
        SANDBOX_REAPER_POD_NAME: `${SANDBOX}-0`,
        SANDBOX_REAPER_SOCKET: join(dir, 'reaper.sock'),
        SANDBOX_REAPER_STATE_DIR: join(dir, 'state'),
        SANDBOX_REAPER_OUTPUT_DIR: dir,
        SANDBOX_REAPER_GRACE_SECONDS: '2',
      },
    });
    started.stdout.on('data', (c: Buffer) => log.push(c.toString('utf8')));
    started.stderr.on('data', (c: Buffer) => log.push(c.toString('utf8')));
    return started;
  };

  afterAll(async () => {
    sidecar?.kill('SIGKILL');
    await killMarked(prefix);
    await rm(dir, { recursive: true, force: true });
  });

  it('retires the subagent’s groups when its status.turn completes, and records it in status and an Event', async () => {
    const client = createReaperClient({ socketPath: join(dir, 'reaper.sock') });
    await waitFor(
      'the sidecar to listen',
      async () => ((await client.health()) ? true : undefined),
      60_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; sidecar log:\n${log.join('')}`);
    });
    const spawnFor = (session: string, turn: string): Promise<SpawnedShell> =>
      spawnRegisteredShell({ client, session: `${prefix}-${session}`, turn, command: 'sleep 1000 & wait' });
    // The host writes each turn before it starts that turn's shells (docs/sidecar.md, registration contract).
    await writeTurn('child', { id: 't1', phase: 'Running', origin: 'ParentMessage' });
    const child = await spawnFor('child', 't1');
    const parent = await spawnFor('parent', 'p1');
    const elsewhere = await spawnFor('elsewhere', 'e1');
    expect([child, parent, elsewhere].map((s) => s.registration.kind)).toEqual([
      'Registered',
      'Registered',
      'Registered',
    ]);

    await writeTurn('elsewhere', { id: 'e1', phase: 'Completed', origin: 'ParentMessage' });
    await writeTurn('parent', { id: 'p1', phase: 'Completed', origin: 'PersonMessage' });
    expect((await liveMembers(child.pid)).length).toBeGreaterThanOrEqual(2);
    await writeTurn('child', { id: 't1', phase: 'Completed', origin: 'ParentMessage' });

    await waitFor('the child’s group to be empty', () => groupEmpty(child.pid), 60_000);
    const shells = await waitFor(
      'status.shells',
      async () => (await reference('child')).status?.shells,
      60_000,
    );
    expect(shells).toMatchObject({ retiredTurn: 't1', retiredGroups: 1, unreachable: 0 });
    expect((await reference('child')).status?.turn).toMatchObject({ id: 't1', phase: 'Completed' });

    const events = await kubeConfig()
      .makeApiClient(CoreV1Api)
      .listNamespacedEvent({ namespace, fieldSelector: 'involvedObject.name=child' });
    expect(events.items.map((e) => [e.reason, e.type, e.involvedObject.kind])).toEqual([
      ['ShellsRetired', 'Normal', 'SessionReference'],
    ]);

    // Root sessions and other sandboxes' sessions are never touched.
    expect((await liveMembers(parent.pid)).length).toBeGreaterThanOrEqual(2);
    expect((await liveMembers(elsewhere.pid)).length).toBeGreaterThanOrEqual(2);
    expect((await reference('elsewhere')).status?.shells).toBeUndefined();
  });
  it('refuses a socket turn end the SessionReference does not confirm, and logs it: a root named a subagent keeps its shells', async () => {
    const client = createReaperClient({ socketPath: join(dir, 'reaper.sock') });
    const root = await spawnRegisteredShell({
      client,
      session: `${prefix}-parent`,
      turn: 'p2',
      command: 'sleep 1000 & wait',
    });
    expect(root.registration.kind).toBe('Registered');
    await waitFor('the root’s dev server to fork', async () => {
      const members = await liveMembers(root.pid);
      return members.length >= 2 ? true : pending({ members });
    });
    // Any shell in the pod can reach the socket and read the root's ids from /proc/<pid>/environ.
    const hostile = client.endTurn({
      session: `${prefix}-parent`,
      turn: 'p2',
      phase: 'Completed',
      role: 'Subagent',
    });
    await expect(hostile).rejects.toMatchObject({ status: 403, code: 'Disagrees' });
    // A subagent turn the reference does not show ended is refused too.
    await expect(
      client.endTurn({ session: `${prefix}-child`, turn: 't9', phase: 'Completed', role: 'Subagent' }),
    ).rejects.toMatchObject({ status: 403, code: 'Disagrees' });
    // The 403 is answered before the sidecar's log line reaches us through its stdout pipe (CI saw it missing).
    await sidecarSaid('turn end refused: the SessionReference does not say so');
    expect((await liveMembers(root.pid)).length).toBeGreaterThanOrEqual(2);
  });

  it('retires a completed turn that status.turn overwrote while the sidecar was down, and publishes no exit of its shells', async () => {
    const socketPath = join(dir, 'reaper.sock');
    const client = createReaperClient({ socketPath });
    const session = `${prefix}-child`;
    await writeTurn('child', { id: 't2', phase: 'Running', origin: 'PersonMessage' });
    const running = await spawnRegisteredShell({ client, session, turn: 't2', command: 'sleep 1000 & wait' });
    const exiting = await spawnRegisteredShell({ client, session, turn: 't2', command: 'exec sleep 1000' });
    expect([running, exiting].map((s) => s.registration.kind)).toEqual(['Registered', 'Registered']);

    const stopped = sidecar;
    sidecar = undefined;
    stopped?.kill('SIGKILL');
    if (stopped !== undefined && stopped.exitCode === null) await once(stopped, 'exit');
    // While the sidecar is down: t2 completes, one of its shells exits, and t3 overwrites status.turn.
    exiting.child.kill('SIGKILL');
    await waitFor('the exiting shell to be gone', () => groupEmpty(exiting.pid));
    await writeStatus('child', {
      turn: { id: 't2', phase: 'Completed', origin: 'PersonMessage' },
      endedTurns: [
        { id: 't1', phase: 'Completed' },
        { id: 't2', phase: 'Completed' },
      ],
    });
    await writeTurn('child', { id: 't3', phase: 'Running', origin: 'ParentMessage' });

    sidecar = startSidecarProcess();
    await waitFor(
      'the restarted sidecar to listen',
      async () => ((await client.health()) ? true : undefined),
      60_000,
    );
    await waitFor('the overwritten turn’s group to be empty', () => groupEmpty(running.pid), 60_000).catch(
      (error: unknown) => {
        throw new Error(`${String(error)}; sidecar log:\n${log.join('')}`);
      },
    );
    await waitFor(
      'status.shells for t2',
      async () => {
        const shells = (await reference('child')).status?.shells;
        return shells?.retiredTurn === 't2' ? true : pending({ shells });
      },
      60_000,
    );
    // A long-poll that returns as soon as any notice is due: the exited shell's notice must never come.
    const page = await client.readNotices(0, 3_000);
    expect(page.notices.filter((n) => n.session === session)).toEqual([]);
  });

  it('retires a completed turn whose end fell out of status.endedTurns: 33 turns ended while the sidecar was down', async () => {
    const client = createReaperClient({ socketPath: join(dir, 'reaper.sock') });
    const session = `${prefix}-child`;
    await writeTurn('child', { id: 't4', phase: 'Running', origin: 'ParentMessage' });
    const shell = await spawnRegisteredShell({ client, session, turn: 't4', command: 'sleep 1000 & wait' });
    expect(shell.registration.kind).toBe('Registered');

    const stopped = sidecar;
    sidecar = undefined;
    stopped?.kill('SIGKILL');
    if (stopped !== undefined && stopped.exitCode === null) await once(stopped, 'exit');
    // While it is down: t4 completes, then 32 more turns end (31 fail, the last completes), so the host's
    // history of 32 no longer holds t4; u33 runs.
    const later = Array.from({ length: 32 }, (_, i) => ({
      id: `u${i + 1}`,
      phase: i === 31 ? 'Completed' : 'Failed',
    }));
    await writeStatus('child', {
      turn: { id: 'u33', phase: 'Running', origin: 'ParentMessage' },
      endedTurns: later,
    });

    sidecar = startSidecarProcess();
    await waitFor(
      'the restarted sidecar to listen',
      async () => ((await client.health()) ? true : undefined),
      60_000,
    );
    await waitFor('the lost turn’s group to be empty', () => groupEmpty(shell.pid), 30_000).catch(
      (error: unknown) => {
        throw new Error(`${String(error)}; sidecar log:\n${log.join('')}`);
      },
    );
    await sidecarSaid('its end fell out of status.endedTurns');
  });
});
