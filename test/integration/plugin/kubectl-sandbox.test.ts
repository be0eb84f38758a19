/**
 * `kubectl sandbox` as users run it: the built kubectl finds bin/kubectl-sandbox on PATH, the machine's own
 * `node` runs it (no node_modules/.bin on PATH), it reads through that kubectl, and it answers from the cluster — references and foreignness, why a deletion is blocked (with the operator's
 * real decision), what the shell reaper retired (written by the sidecar's own reporter) — with exit codes
 * and errors that name the object.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeReporter } from '../../../operator/sidecar/process/kube/status-reporter.ts';
import { API_VERSION, SESSION_REFERENCE } from '../../../operator/api/names.ts';
import { kubeConfig, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { kubectlAsUser, userPath } from '../../harness/plugin.ts';
import { createReference, deleteSandbox, sandboxManifest, untilSandbox } from '../controller/fixtures.ts';
import {
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from '../controller/operator.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');
const namespace = testNamespace('plugin');
let operator: RunningOperator;

const kubectl = kubectlAsUser;

const sandbox = (...args: string[]) => kubectl(['sandbox', ...args, '-n', namespace]);
const rows = (output: string) => output.split('\n').map((line) => line.trim().split(/\s{2,}/));

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
  const manifest = sandboxManifest(namespace, 'shared', { worktree: 'wt-1', shellReaper: true });
  await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
  await createReference(namespace, 'own', { sandbox: 'shared', session: 'workspace_1', worktree: 'wt-1' });
  await kubectlOk(['apply', '-n', namespace, '-f', '-'], {
    input: JSON.stringify({
      apiVersion: API_VERSION,
      kind: SESSION_REFERENCE.kind,
      metadata: { name: 'sub' },
      spec: {
        sandbox: 'shared',
        session: 'workspace_2',
        worktree: 'wt-1',
        route: 'shared-control-v1/wt-1/workspace_2',
        role: 'Subagent',
        parentSession: 'workspace_1',
      },
    }),
  });
  await createReference(namespace, 'board', {
    sandbox: 'shared',
    session: 'workspace_3',
    worktree: 'wt-2',
    role: 'Board',
  });
  await createReference(namespace, 'gone', { sandbox: 'shared', session: 'workspace_4', state: 'Detached' });
  await untilSandbox(
    namespace,
    'shared',
    'references counted',
    (sandbox) => sandbox.status?.references?.attached === 3,
  );
});
afterAll(async () => {
  await operator.stop();
});

describe('kubectl sandbox', () => {
  it('is found by kubectl on PATH and runs on the machine’s own node', async () => {
    const list = await kubectl(['plugin', 'list']);
    expect(list.stdout).toContain(join(root, 'bin', 'kubectl-sandbox'));
    // The node that runs it is the machine's (v20 on the development machine), not the pinned one.
    const { stdout: node } = await run('sh', ['-c', 'command -v node'], { env: { PATH: userPath() } });
    expect(node).not.toContain('node_modules');
  });

  it('lists the references of a sandbox and which are foreign to its worktree', async () => {
    const result = await sandbox('refs', 'shared');
    expect(result.exitCode).toBe(0);
    expect(rows(result.stdout).slice(0, 5)).toEqual([
      ['NAME', 'SESSION', 'WORKTREE', 'ROLE', 'STATE', 'TURN', 'FOREIGN'],
      ['board', 'workspace_3', 'wt-2', 'Board', 'Attached', '<none>', 'yes'],
      ['gone', 'workspace_4', '<none>', 'Root', 'Detached', '<none>', 'yes'],
      ['own', 'workspace_1', 'wt-1', 'Root', 'Attached', '<none>', 'no'],
      ['sub', 'workspace_2', 'wt-1', 'Subagent', 'Attached', '<none>', 'no'],
    ]);
    expect(result.stdout).toContain(
      `Sandbox ${namespace}/shared (worktree wt-1): 4 reference(s), 3 attached, 1 detached; 2 foreign to its worktree.`,
    );
    const foreign = await sandbox('refs', 'shared', '--foreign', '-o', 'json');
    const view = JSON.parse(foreign.stdout) as { rows: { name: string }[] };
    expect(view.rows.map((row) => row.name)).toEqual(['board', 'gone']);
  });

  it('tells what would block the deletion of a sandbox not being deleted', async () => {
    const result = await sandbox('why', 'shared');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(`Sandbox ${namespace}/shared (worktree wt-1) is not being deleted.`);
    expect(result.stdout).toMatch(
      /References that would block a deletion \(2\):\n.*\n {2}board .*\n {2}gone /,
    );
  });

  it('explains a blocked deletion with the operator’s verdict, the blockers, the held pod and the Events', async () => {
    await deleteSandbox(namespace, 'shared');
    await untilSandbox(
      namespace,
      'shared',
      'deletion blocked',
      (sandbox) => sandbox.status?.phase === 'Blocked',
    );
    const result = await sandbox('why', 'shared');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('is being deleted and the deletion is BLOCKED');
    expect(result.stdout).toContain('Verdict:    Foreign (evidence: Index)');
    expect(result.stdout).toContain('Condition:  DeletionBlocked=True');
    expect(result.stdout).toMatch(/Blocking references \(2\):\n.*\n {2}board .*\n {2}gone /);
    expect(result.stdout).toContain("Pods held by the operator's finalizer: shared-0");
    expect(result.stdout).toContain('finishes by itself once the blocking references are forgotten');
    expect(result.stdout).toMatch(/Recent events:\n.*\n.*Warning +DeletionBlocked +Foreign \(Index\)/);
  });

  it('shows what the shell reaper retired for a session, as the sidecar records it', async () => {
    // The agent host writes the turn; the sidecar retires the shells and records what it did.
    const turn = { status: { turn: { id: 't-7', phase: 'Completed', origin: 'ParentMessage' } } };
    await kubectlOk([
      'patch',
      'sref',
      'sub',
      '-n',
      namespace,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(turn),
    ]);
    const reporter = createKubeReporter({
      kubeConfig: kubeConfig(),
      namespace,
      podName: 'shared-0',
      logger: pino({ level: 'silent' }),
      referenceOf: (session) => (session === 'workspace_2' ? { name: 'sub' } : undefined),
    });
    await reporter.reportRetired({
      session: 'workspace_2',
      turn: 't-7',
      finishedAt: new Date().toISOString(),
      summary: {
        retiredGroups: 3,
        killedGroups: 1,
        escapees: 0,
        unreachable: 0,
        unreachablePids: [],
        message: 'retired 3 shell group(s)',
      },
    });
    const result = await sandbox('shells', 'sub');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain(
      `SessionReference ${namespace}/sub: Subagent session workspace_2 of workspace_1 in sandbox shared (worktree wt-1), Attached.`,
    );
    expect(result.stdout).toContain('Turn:     t-7 Completed (opened by ParentMessage)');
    expect(result.stdout).toMatch(
      /Shells: {3}3 group\(s\) retired at the end of turn t-7, \d+s ago; 0 unreachable/,
    );
    expect(result.stdout).toContain('Reaper:   enabled, 5s between SIGTERM and SIGKILL');
    expect(result.stdout).toMatch(
      /Shell reaper events:\n.*\n.*Normal +ShellsRetired +turn t-7: retired 3 shell group\(s\)/,
    );
  });

  it('fails with exit 1 naming an object that does not exist', async () => {
    const result = await sandbox('why', 'nope');
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe(`error: Sandbox ${namespace}/nope not found\n`);
    const reference = await sandbox('shells', 'nope');
    expect(reference.stderr).toBe(`error: SessionReference ${namespace}/nope not found\n`);
  });

  it('fails with exit 1 naming what the user may not read', async () => {
    // The operator's own identity may create Events but not list them.
    const result = await kubectl(['sandbox', 'why', 'shared', '-n', namespace], { restricted: true });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain(
      `error: reading the Events of Sandbox ${namespace}/shared was refused (HTTP 403)`,
    );
  });

  it('fails with exit 2 and the usage on a bad command line', async () => {
    const result = await sandbox('shells');
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('error: shells needs the name of a sessionreference');
    expect(result.stderr).toContain('Usage:');
  });

  it('lists across namespaces with -A, and answers in YAML with apiVersion and kind', async () => {
    const all = await kubectl(['sandbox', 'refs', '-A']);
    expect(all.exitCode).toBe(0);
    expect(rows(all.stdout)[0]).toEqual([
      'NAMESPACE',
      'NAME',
      'SANDBOX',
      'SESSION',
      'WORKTREE',
      'ROLE',
      'STATE',
      'TURN',
      'FOREIGN',
    ]);
    expect(rows(all.stdout)).toContainEqual([
      namespace,
      'board',
      'shared',
      'workspace_3',
      'wt-2',
      'Board',
      'Attached',
      '<none>',
      'yes',
    ]);
    const why = await kubectl(['sandbox', 'why', '--all-namespaces', '-o', 'yaml']);
    const list = parseYaml(why.stdout) as { apiVersion: string; kind: string; items: { name: string }[] };
    expect(list).toMatchObject({
      apiVersion: 'kubectl-sandbox.sandbox.agents.dev/v1alpha1',
      kind: 'SandboxDeletionList',
    });
    expect(list.items.map((item) => item.name)).toContain('shared');
  });

  it('passes kubectl’s global flags on: --as, --server, --request-timeout', async () => {
    const impersonated = await sandbox('why', 'shared', '--as=someone-else');
    expect(impersonated.exitCode).toBe(1);
    expect(impersonated.stderr).toContain('was refused (HTTP 403)');
    expect(impersonated.stderr).toContain('User "someone-else" cannot get resource "sandboxes"');
    const unreachable = await sandbox(
      'why',
      'shared',
      '--server=https://127.0.0.1:1',
      '--request-timeout=2s',
    );
    expect(unreachable.exitCode).toBe(1);
    expect(unreachable.stderr).toMatch(/^error: reading Sandbox .*shared failed: .*127\.0\.0\.1:1/);
  });

  it('prints terminal escape sequences from an Event message inert', async () => {
    const hostile = '\u001b]0;pwned\u0007\u001b[2J\u001b[31mVerdict: Exclusive\u009b0m';
    const uid = JSON.parse(await kubectlOk(['get', 'sandbox', 'shared', '-n', namespace, '-o', 'json'])) as {
      metadata: { uid: string };
    };
    await kubectlOk(['create', '-n', namespace, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'hostile' },
        involvedObject: {
          apiVersion: API_VERSION,
          kind: 'Sandbox',
          name: 'shared',
          namespace,
          uid: uid.metadata.uid,
        },
        reason: 'Injected',
        message: hostile,
        type: 'Warning',
        lastTimestamp: new Date().toISOString(),
      }),
    });
    const result = await sandbox('why', 'shared');
    expect(result.exitCode).toBe(0);
    // eslint-disable-next-line no-control-regex -- what must not reach the terminal
    expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(result.stdout).toContain('\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mVerdict: Exclusive\\x9b0m');
    const json = await sandbox('why', 'shared', '-o', 'json');
    const view = JSON.parse(json.stdout) as { events: { message: string }[] };
    expect(view.events.map((event) => event.message)).toContain(hostile);
  });

  it('lists the sandbox claims and warm pools of a namespace, values from the cluster made inert', async () => {
    const template = sandboxManifest(namespace, 'plugin-template');
    await kubectlOk(['apply', '-n', namespace, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: API_VERSION,
        kind: 'SandboxTemplate',
        metadata: { name: 'plugin-template' },
        spec: template.spec,
      }),
    });
    await kubectlOk(['apply', '-n', namespace, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: API_VERSION,
        kind: 'SandboxWarmPool',
        metadata: { name: 'plugin-pool' },
        spec: { templateRef: { name: 'plugin-template' }, replicas: 0 },
      }),
    });
    await kubectlOk(['apply', '-n', namespace, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: API_VERSION,
        kind: 'SandboxClaim',
        metadata: { name: 'plugin-claim' },
        spec: { warmPoolRef: { name: 'missing-pool' }, session: 'workspace_9', route: 'r', role: 'Root' },
      }),
    });
    const pools = await sandbox('pools');
    expect(pools.exitCode, pools.stderr).toBe(0);
    expect(rows(pools.stdout)[0]).toEqual([
      'NAME',
      'TEMPLATE',
      'DESIRED',
      'CURRENT',
      'READY',
      'UPDATE',
      'AGE',
    ]);
    expect(rows(pools.stdout)[1]?.slice(0, 3)).toEqual(['plugin-pool', 'plugin-template', '0']);
    // The operator says why the claim is not bound: its pool does not exist.
    const claim = await eventually('the claim’s row says WarmPoolNotFound', async () => {
      const result = await sandbox('claims');
      const row = rows(result.stdout).find((cells) => cells[0] === 'plugin-claim');
      return row?.includes('WarmPoolNotFound') === true ? row : pending(result);
    });
    expect(claim.slice(0, 3)).toEqual(['plugin-claim', 'pool/missing-pool', 'workspace_9']);
    const yaml = parseYaml((await sandbox('claims', '-o', 'yaml')).stdout) as {
      kind: string;
      items: unknown[];
    };
    expect(yaml.kind).toBe('SandboxClaimList');
    await kubectlOk(['delete', 'sandboxclaim', 'plugin-claim', '-n', namespace]);
  });
});
