import { describe, expect, it } from 'vitest';
import type { Parsed } from '../../../operator/api/parse.ts';
import { parseSandbox } from '../../../operator/api/parse.ts';
import type { Sandbox } from '../../../operator/api/objects.ts';
import { PluginError } from '../../../operator/cli/plugin/errors.ts';
import { runCommand } from '../../../operator/cli/plugin/run.ts';
import { fakePorts } from './plugin-ports.ts';
import { parse as parseYaml } from 'yaml';
import { minutesAgo, NOW, parsedReference, sandbox } from './plugin-fixtures.ts';

const ok = (value: Sandbox): Parsed<Sandbox> => ({ ok: true, value });
const TEAM_A = { allNamespaces: false, namespace: 'team-a' } as const;

describe('running a plugin command', () => {
  it('fails naming the Sandbox that does not exist', async () => {
    const { ports } = fakePorts({});
    const run = runCommand({ kind: 'why', sandbox: 'missing' }, TEAM_A, 'text', ports, NOW);
    await expect(run).rejects.toThrow(new PluginError('NotFound', 'Sandbox team-a/missing not found'));
  });

  it('fails naming the SessionReference that does not exist', async () => {
    const { ports } = fakePorts({});
    await expect(
      runCommand({ kind: 'shells', reference: 'sref-x' }, TEAM_A, 'text', ports, NOW),
    ).rejects.toThrow('SessionReference team-a/sref-x not found');
  });

  it('fails naming the malformed field of a Sandbox it cannot read', async () => {
    const broken = parseSandbox({
      apiVersion: 'sandbox.agents.dev/v1alpha1',
      kind: 'Sandbox',
      metadata: { name: 'sbx-a', namespace: 'team-a' },
      spec: {},
    });
    const { ports } = fakePorts({ sandboxes: [broken] });
    const run = runCommand(
      { kind: 'refs', sandbox: 'sbx-a', foreignOnly: false },
      TEAM_A,
      'text',
      ports,
      NOW,
    );
    await expect(run).rejects.toThrow(/Sandbox team-a\/sbx-a is malformed: spec\.podTemplate/);
  });

  it('answers in JSON with the same view the text shows', async () => {
    const { ports, reads } = fakePorts({
      sandboxes: [ok(sandbox({ worktree: 'wt-1' }))],
      references: [parsedReference('other', { worktree: 'wt-2' })],
    });
    const text = await runCommand(
      { kind: 'refs', sandbox: 'sbx-a', foreignOnly: false },
      TEAM_A,
      'json',
      ports,
      NOW,
    );
    expect(JSON.parse(text)).toMatchObject({
      apiVersion: 'kubectl-sandbox.sandbox.agents.dev/v1alpha1',
      kind: 'SandboxReferences',
      sandbox: { namespace: 'team-a', name: 'sbx-a', worktree: 'wt-1' },
      rows: [{ name: 'other', foreign: true }],
      counts: { total: 1, foreign: 1 },
    });
    // Both are read at once, so in no particular order.
    expect(reads.toSorted()).toEqual(['references of team-a/sbx-a', 'sandbox team-a/sbx-a']);
  });

  it('names the context’s namespace when none was given and the object is missing', async () => {
    const { ports } = fakePorts({});
    const run = runCommand(
      { kind: 'why', sandbox: 'missing' },
      { allNamespaces: false, namespace: undefined },
      'text',
      ports,
      NOW,
    );
    await expect(run).rejects.toThrow('Sandbox from-context/missing not found');
  });

  it('reports a missing sandbox before a read that failed beside it', async () => {
    const { ports } = fakePorts({}, { events: new PluginError('Forbidden', 'events refused') });
    const run = runCommand({ kind: 'why', sandbox: 'missing' }, TEAM_A, 'text', ports, NOW);
    await expect(run).rejects.toThrow('Sandbox team-a/missing not found');
    const { ports: present } = fakePorts(
      { sandboxes: [ok(sandbox())] },
      { events: new PluginError('Forbidden', 'events refused') },
    );
    await expect(runCommand({ kind: 'why', sandbox: 'sbx-a' }, TEAM_A, 'text', present, NOW)).rejects.toThrow(
      'events refused',
    );
  });

  it('answers in YAML with apiVersion and kind', async () => {
    const { ports } = fakePorts({ sandboxes: [ok(sandbox({ worktree: 'wt-1' }))] });
    const text = await runCommand({ kind: 'why', sandbox: 'sbx-a' }, TEAM_A, 'yaml', ports, NOW);
    expect(parseYaml(text)).toMatchObject({
      apiVersion: 'kubectl-sandbox.sandbox.agents.dev/v1alpha1',
      kind: 'SandboxDeletion',
      state: 'NotDeleting',
      sandbox: { namespace: 'team-a', name: 'sbx-a', worktree: 'wt-1' },
    });
  });

  it('lists every sandbox of all namespaces with -A, and where each deletion stands', async () => {
    const blocked = sandbox({
      name: 'sbx-b',
      deleting: true,
      status: {
        phase: 'Blocked',
        decision: {
          verdict: 'Foreign',
          evidence: 'Index',
          decidedAt: minutesAgo(4).toISOString(),
          blockingReferences: ['r1', 'r2'],
          blockingCount: 2,
        },
      },
    });
    const { ports, reads } = fakePorts({ sandboxes: [ok(blocked), ok(sandbox({ worktree: 'wt-1' }))] });
    const all = { allNamespaces: true } as const;
    const text = await runCommand({ kind: 'why-list' }, all, 'text', ports, NOW);
    expect(text.split('\n').map((line) => line.split(/\s{2,}/))).toEqual([
      ['NAMESPACE', 'NAME', 'WORKTREE', 'PHASE', 'DELETION', 'VERDICT', 'BLOCKING', 'WAITING'],
      ['team-a', 'sbx-a', 'wt-1', '<none>', 'NotDeleting', '<none>', '0', '<none>'],
      ['team-a', 'sbx-b', '<none>', 'Blocked', 'Blocked', 'Foreign', '2', '5m'],
      [''],
    ]);
    expect(reads).toEqual(['sandboxes {"allNamespaces":true}']);
    const json = JSON.parse(await runCommand({ kind: 'why-list' }, all, 'json', ports, NOW)) as {
      kind: string;
      items: { name: string }[];
    };
    expect(json.kind).toBe('SandboxDeletionList');
    expect(json.items.map((item) => item.name)).toEqual(['sbx-a', 'sbx-b']);
  });

  it('lists the references of a namespace with their sandbox and foreignness', async () => {
    const { ports } = fakePorts({
      sandboxes: [ok(sandbox({ worktree: 'wt-1' }))],
      references: [
        parsedReference('mine', { worktree: 'wt-1' }),
        parsedReference('theirs', { worktree: 'wt-2' }),
      ],
    });
    const text = await runCommand({ kind: 'refs-list', foreignOnly: true }, TEAM_A, 'text', ports, NOW);
    expect(text.split('\n').map((line) => line.split(/\s{2,}/))).toEqual([
      ['NAME', 'SANDBOX', 'SESSION', 'WORKTREE', 'ROLE', 'STATE', 'TURN', 'FOREIGN'],
      ['theirs', 'sbx-a', 'workspace_theirs', 'wt-2', 'Root', 'Attached', '<none>', 'yes'],
      [''],
    ]);
  });

  it('lists the claims: what each asks for, its sandbox, launch type and what it waits for', async () => {
    const claim = (name: string, spec: object, status: object = {}) => ({
      metadata: { namespace: 'team-a', name, creationTimestamp: minutesAgo(3).toISOString() },
      spec: { session: `workspace_${name}`, ...spec },
      status,
    });
    const { ports, reads } = fakePorts({
      sandboxClaims: [
        claim(
          'warm',
          { warmPoolRef: { name: 'python-pool' } },
          {
            sandbox: 'python-pool-x7k2q',
            launchType: 'Warm',
            conditions: [
              { type: 'Bound', status: 'True', reason: 'WarmSandboxBound' },
              { type: 'Ready', status: 'True', reason: 'SandboxReady' },
            ],
          },
        ),
        claim(
          'cold',
          { templateRef: { name: 'python-agent' } },
          {
            conditions: [
              { type: 'Bound', status: 'False', reason: 'TemplateNotFound' },
              { type: 'Ready', status: 'False', reason: 'NotBound' },
            ],
          },
        ),
        // A value from the cluster is made printable: no terminal escapes reach the screen.
        claim('odd', { warmPoolRef: { name: 'p\u001b[31m' } }),
      ],
    });
    const text = await runCommand({ kind: 'claims-list' }, TEAM_A, 'text', ports, NOW);
    expect(text.split('\n').map((line) => line.split(/\s{2,}/))).toEqual([
      ['NAME', 'FROM', 'SESSION', 'SANDBOX', 'LAUNCH', 'BOUND', 'READY', 'WAITING FOR', 'AGE'],
      [
        'cold',
        'template/python-agent',
        'workspace_cold',
        '<none>',
        '<none>',
        'False',
        'False',
        'TemplateNotFound',
        '3m',
      ],
      ['odd', 'pool/p\\x1b[31m', 'workspace_odd', '<none>', '<none>', '<none>', '<none>', '<none>', '3m'],
      [
        'warm',
        'pool/python-pool',
        'workspace_warm',
        'python-pool-x7k2q',
        'Warm',
        'True',
        'True',
        '<none>',
        '3m',
      ],
      [''],
    ]);
    expect(reads).toEqual(['sandboxclaims {"allNamespaces":false,"namespace":"team-a"}']);
    const json = JSON.parse(await runCommand({ kind: 'claims-list' }, TEAM_A, 'json', ports, NOW)) as {
      kind: string;
      items: { name: string; launchType?: string }[];
    };
    expect(json.kind).toBe('SandboxClaimList');
    expect(json.items.map((item) => [item.name, item.launchType])).toEqual([
      ['cold', undefined],
      ['odd', undefined],
      ['warm', 'Warm'],
    ]);
    const none = fakePorts({});
    expect(await runCommand({ kind: 'claims-list' }, TEAM_A, 'text', none.ports, NOW)).toBe(
      'No SandboxClaims found in this namespace.\n',
    );
  });

  it('lists the pools of all namespaces: template, desired, current and ready', async () => {
    const { ports } = fakePorts({
      warmPools: [
        {
          metadata: {
            namespace: 'team-b',
            name: 'python-pool',
            creationTimestamp: minutesAgo(3).toISOString(),
          },
          spec: {
            templateRef: { name: 'python-agent' },
            replicas: 3,
            updateStrategy: { type: 'OnReplenish' },
          },
          status: { replicas: 3, readyReplicas: 2 },
        },
        { metadata: { namespace: 'team-a', name: 'new' }, spec: { templateRef: { name: 't' }, replicas: 1 } },
      ],
    });
    const all = { allNamespaces: true } as const;
    const text = await runCommand({ kind: 'pools-list' }, all, 'text', ports, NOW);
    expect(text.split('\n').map((line) => line.split(/\s{2,}/))).toEqual([
      ['NAMESPACE', 'NAME', 'TEMPLATE', 'DESIRED', 'CURRENT', 'READY', 'UPDATE', 'AGE'],
      ['team-a', 'new', 't', '1', '<none>', '<none>', '<none>', '<none>'],
      ['team-b', 'python-pool', 'python-agent', '3', '3', '2', 'OnReplenish', '3m'],
      [''],
    ]);
    const yaml = parseYaml(await runCommand({ kind: 'pools-list' }, all, 'yaml', ports, NOW)) as {
      kind: string;
    };
    expect(yaml.kind).toBe('SandboxWarmPoolList');
    const none = fakePorts({});
    expect(await runCommand({ kind: 'pools-list' }, all, 'text', none.ports, NOW)).toBe(
      'No SandboxWarmPools found.\n',
    );
  });
});
