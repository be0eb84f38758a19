// A catalogue of bad objects: each is refused by the API server itself (schema, CEL rules, strict field
// validation) with a message that names the offending field, and nothing is stored.
import { describe, expect, it } from 'vitest';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { sandbox, sessionReference, times, type Manifest } from './examples.ts';

const ns = testNamespace('rejections');

type Spec = Record<string, unknown>;

interface CreateCase {
  readonly name: string;
  readonly object: (name: string) => Manifest;
  /** Every string must appear in the API server's refusal. */
  readonly refusal: readonly string[];
}

const long = (n: number): string => 'a'.repeat(n);
const template = (spec: Spec, metadata: Spec = {}): Spec => ({ podTemplate: { metadata, spec } });
const container = (i: number): Spec => ({ name: `c${i}`, image: 'registry.example/x:1' });

function withoutSpecField(manifest: Manifest, field: string): Manifest {
  const spec = Object.entries(manifest['spec'] as Spec).filter(([key]) => key !== field);
  return { ...manifest, spec: Object.fromEntries(spec) };
}

const creates: readonly CreateCase[] = [
  {
    name: 'Sandbox without spec.podTemplate',
    object: (n) => withoutSpecField(sandbox(ns, n), 'podTemplate'),
    refusal: ['spec.podTemplate: Required value'],
  },
  {
    name: 'Sandbox with no containers',
    object: (n) => sandbox(ns, n, template({ containers: [] })),
    refusal: ['spec.podTemplate.spec.containers', 'should have at least 1 items'],
  },
  {
    name: 'Sandbox with 17 containers',
    object: (n) => sandbox(ns, n, template({ containers: times(17, container) })),
    refusal: ['spec.podTemplate.spec.containers: Too many: 17: must have at most 16 items'],
  },
  {
    name: 'Sandbox container without an image',
    object: (n) => sandbox(ns, n, template({ containers: [{ name: 'main' }] })),
    refusal: ['spec.podTemplate.spec.containers[0].image: Required value'],
  },
  {
    name: 'Sandbox with 65 pod labels',
    object: (n) =>
      sandbox(
        ns,
        n,
        template(
          { containers: [container(0)] },
          { labels: Object.fromEntries(times(65, (i) => [`l${i}`, 'v'])) },
        ),
      ),
    refusal: ['spec.podTemplate.metadata.labels: Too many: 65: must have at most 64 items'],
  },
  {
    name: 'Sandbox worktree of 129 characters',
    object: (n) => sandbox(ns, n, { worktree: long(129) }),
    refusal: ['spec.worktree: Too long: may not be more than 128 bytes'],
  },
  {
    name: 'Sandbox worktree that is not an identifier',
    object: (n) => sandbox(ns, n, { worktree: '-wt 1' }),
    refusal: ['spec.worktree in body should match'],
  },
  {
    name: 'Sandbox provider with capitals',
    object: (n) => sandbox(ns, n, { provider: 'Kubernetes' }),
    refusal: ['spec.provider in body should match'],
  },
  {
    name: 'Sandbox cleanup policy not in the enum',
    object: (n) => sandbox(ns, n, { cleanup: { policy: 'Delete' } }),
    refusal: [
      'spec.cleanup.policy: Unsupported value: "Delete": supported values: "Retain", "DeleteWhenUnreferenced"',
    ],
  },
  {
    name: 'Sandbox ttl beyond 30 days',
    object: (n) => sandbox(ns, n, { cleanup: { policy: 'Retain', ttlSecondsAfterUnreferenced: 2_592_001 } }),
    refusal: ['spec.cleanup.ttlSecondsAfterUnreferenced', 'should be less than or equal to 2592000'],
  },
  {
    name: 'Sandbox with 9 replicas',
    object: (n) => sandbox(ns, n, { replicas: 9 }),
    refusal: ['spec.replicas', 'should be less than or equal to 8'],
  },
  {
    name: 'Sandbox replicas as a string',
    object: (n) => sandbox(ns, n, { replicas: 'two' }),
    refusal: ['spec.replicas', 'must be of type integer'],
  },
  {
    name: 'Sandbox shell reaper grace of 0 s',
    object: (n) => sandbox(ns, n, { shellReaper: { enabled: true, gracePeriodSeconds: 0 } }),
    refusal: ['spec.shellReaper.gracePeriodSeconds', 'should be greater than or equal to 1'],
  },
  {
    name: 'Sandbox shellReaper.enabled as a string',
    object: (n) => sandbox(ns, n, { shellReaper: { enabled: 'yes' } }),
    refusal: ['spec.shellReaper.enabled', 'must be of type boolean'],
  },
  {
    name: 'Sandbox with an unknown spec field',
    object: (n) => sandbox(ns, n, { colour: 'blue' }),
    refusal: ['unknown field "spec.colour"'],
  },
  {
    name: 'Sandbox named with 64 characters',
    object: () => sandbox(ns, `s${long(63)}`),
    refusal: ['metadata.name must be at most 63 characters'],
  },
  {
    name: 'SessionReference without spec.session',
    object: (n) => withoutSpecField(sessionReference(ns, n), 'session'),
    refusal: ['spec.session: Required value'],
  },
  {
    name: 'SessionReference session id of 129 characters',
    object: (n) => sessionReference(ns, n, { session: long(129) }),
    refusal: ['spec.session: Too long: may not be more than 128 bytes'],
  },
  {
    name: 'SessionReference route of 513 characters',
    object: (n) => sessionReference(ns, n, { route: long(513) }),
    refusal: ['spec.route: Too long: may not be more than 512 bytes'],
  },
  {
    name: 'SessionReference to a sandbox name that is not a DNS label',
    object: (n) => sessionReference(ns, n, { sandbox: 'Sbx_A' }),
    refusal: ['spec.sandbox in body should match'],
  },
  {
    name: 'SessionReference role not in the enum',
    object: (n) => sessionReference(ns, n, { role: 'Parent' }),
    refusal: [
      'spec.role: Unsupported value: "Parent": supported values: "Root", "Subagent", "Board", "Ticket"',
    ],
  },
  {
    name: 'SessionReference state not in the enum',
    object: (n) => sessionReference(ns, n, { state: 'Gone' }),
    refusal: ['spec.state: Unsupported value: "Gone": supported values: "Attached", "Detached"'],
  },
  {
    name: 'Subagent SessionReference without a parentSession',
    object: (n) => withoutSpecField(sessionReference(ns, n), 'parentSession'),
    refusal: ['spec.parentSession is required when spec.role is Subagent'],
  },
  {
    name: 'Sandbox suspended whose workspace would be lost (no spec.workspace: Ephemeral)',
    object: (n) => sandbox(ns, n, { operatingMode: 'Suspended' }),
    refusal: [
      "spec.operatingMode: Suspended deletes the sandbox's pods",
      'give it a persistent workspace, or set spec.workspace: Ephemeral to accept losing it',
    ],
  },
  {
    name: 'Sandbox idle policy whose suspension would lose the workspace',
    object: (n) => sandbox(ns, n, { idle: { suspendAfterSeconds: 60 } }),
    refusal: [
      'spec.idle suspends an idle sandbox',
      'give it a persistent workspace, or set spec.workspace: Ephemeral to accept losing it',
    ],
  },
  {
    name: 'Sandbox moved by drains whose workspace would be lost',
    object: (n) => sandbox(ns, n, { disruption: { policy: 'Reschedule' } }),
    refusal: [
      'spec.disruption.policy: Reschedule deletes the sandbox',
      'give it a persistent workspace, or set spec.workspace: Ephemeral to accept losing it',
    ],
  },
  {
    name: 'Sandbox idle after fewer seconds than the bound',
    object: (n) => sandbox(ns, n, { workspace: 'Ephemeral', idle: { suspendAfterSeconds: 1 } }),
    refusal: ['spec.idle.suspendAfterSeconds', 'should be greater than or equal to 5'],
  },
  {
    name: 'SessionReference with an unknown spec field',
    object: (n) => sessionReference(ns, n, { attachedBy: 'me' }),
    refusal: ['unknown field "spec.attachedBy"'],
  },
];

describe('creating a bad object', () => {
  it.each(creates.map((c, i) => ({ ...c, objectName: `bad-${i}` })))(
    'refuses: $name',
    async ({ object, refusal, objectName }) => {
      const manifest = object(objectName);
      const result = await kubectl(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
      expect(result.exitCode).not.toBe(0);
      for (const text of refusal) expect(result.stderr).toContain(text);
      const stored = await kubectl([
        'get',
        `${String(manifest['kind'])}.sandbox.agents.dev`,
        manifest.metadata.name,
        '-n',
        ns,
      ]);
      expect(stored.stderr).toContain('NotFound');
    },
  );
});

interface UpdateCase {
  readonly name: string;
  readonly original: (name: string) => Manifest;
  readonly change: (name: string) => Manifest;
  readonly refusal: readonly string[];
}

const updates: readonly UpdateCase[] = [
  {
    name: 'SessionReference moved to another sandbox',
    original: (n) => sessionReference(ns, n),
    change: (n) => sessionReference(ns, n, { sandbox: 'sbx-b' }),
    refusal: ['spec.sandbox: Invalid value', 'spec.sandbox is immutable'],
  },
  {
    name: 'SessionReference given to another session',
    original: (n) => sessionReference(ns, n),
    change: (n) => sessionReference(ns, n, { session: 'workspace_999' }),
    refusal: ['spec.session is immutable'],
  },
  {
    name: 'SessionReference role changed',
    original: (n) => sessionReference(ns, n),
    change: (n) => sessionReference(ns, n, { role: 'Root' }),
    refusal: ['spec.role is immutable'],
  },
  {
    name: 'SessionReference worktree added after creation',
    original: (n) => withoutSpecField(sessionReference(ns, n), 'worktree'),
    change: (n) => sessionReference(ns, n),
    refusal: ['spec.worktree cannot be added or removed after creation'],
  },
  {
    name: 'Sandbox moved to another worktree',
    original: (n) => sandbox(ns, n),
    change: (n) => sandbox(ns, n, { worktree: 'wt-2' }),
    refusal: ['spec.worktree is immutable'],
  },
  {
    name: 'Sandbox worktree removed after creation',
    original: (n) => sandbox(ns, n),
    change: (n) => withoutSpecField(sandbox(ns, n), 'worktree'),
    refusal: ['spec.worktree cannot be added or removed after creation'],
  },
  {
    name: 'Sandbox suspended later, its workspace not given up',
    original: (n) => sandbox(ns, n),
    change: (n) => sandbox(ns, n, { operatingMode: 'Suspended' }),
    refusal: ["spec.operatingMode: Suspended deletes the sandbox's pods"],
  },
];

describe('changing the identity of a stored object', () => {
  it.each(updates.map((c, i) => ({ ...c, objectName: `changed-${i}` })))(
    'refuses: $name',
    async ({ original, change, refusal, objectName }) => {
      const before = original(objectName);
      await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(before) });
      const resource = `${String(before['kind'])}.sandbox.agents.dev`;
      const stored = await kubectlOk(['get', resource, objectName, '-n', ns, '-o', 'jsonpath={.spec}']);

      const result = await kubectl(['apply', '-f', '-'], { input: JSON.stringify(change(objectName)) });
      expect(result.exitCode).not.toBe(0);
      for (const text of refusal) expect(result.stderr).toContain(text);
      expect(await kubectlOk(['get', resource, objectName, '-n', ns, '-o', 'jsonpath={.spec}'])).toBe(stored);
    },
  );
});

describe('writing a bad status', () => {
  it.each([
    {
      name: 'more than 16 blocking references named',
      kind: 'sbx',
      object: (n: string) => sandbox(ns, n),
      status: {
        decision: {
          verdict: 'Foreign',
          evidence: 'Index',
          decidedAt: '2026-01-01T00:00:00Z',
          blockingReferences: times(17, (i) => `sref-${i}`),
        },
      },
      refusal: ['status.decision.blockingReferences: Too many: 17: must have at most 16 items'],
    },
    {
      name: 'a turn phase not in the enum',
      kind: 'sref',
      object: (n: string) => sessionReference(ns, n),
      status: { turn: { id: 't-1', phase: 'Done' } },
      refusal: ['status.turn.phase: Unsupported value: "Done"'],
    },
  ])('refuses $name', async ({ kind, object, status, refusal, name }) => {
    const objectName = `status-${kind}-${name.length}`;
    await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(object(objectName)) });
    const patch = JSON.stringify({ status });
    const result = await kubectl([
      'patch',
      kind,
      objectName,
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      patch,
    ]);
    expect(result.exitCode).not.toBe(0);
    for (const text of refusal) expect(result.stderr).toContain(text);
  });
});
