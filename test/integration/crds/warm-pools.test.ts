// The warm pools' kinds as the API server serves them (docs/warm-pools.md): a template, a pool and a sandbox
// claim apply and read back with their defaults, a pool scales through /scale, and bad ones are refused with
// a message naming the field.
import { describe, expect, it } from 'vitest';
import { WARM_POOL_REPLICAS_MAX } from '../../../operator/api/limits.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { sandboxClaim, sandboxTemplate, sandboxWarmPool, type Manifest } from './examples.ts';

const ns = testNamespace('warm-pool-crds');
const exampleNs = testNamespace('warm-pool-example');

const apply = (manifest: object): Promise<string> =>
  kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(manifest) });

async function getJson(resource: string, name: string): Promise<{ spec: Record<string, unknown> }> {
  return JSON.parse(await kubectlOk(['get', resource, name, '-n', ns, '-o', 'json'])) as {
    spec: Record<string, unknown>;
  };
}

function without(manifest: Manifest, field: string): Manifest {
  const spec = Object.entries(manifest['spec'] as Record<string, unknown>).filter(([key]) => key !== field);
  return { ...manifest, spec: Object.fromEntries(spec) };
}

async function expectRefused(manifest: Manifest, refusal: readonly string[]): Promise<void> {
  const result = await kubectl(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
  expect(result.exitCode).not.toBe(0);
  for (const text of refusal) expect(result.stderr).toContain(text);
}

describe('valid objects', () => {
  it('apply and read back a SandboxTemplate with the blueprint defaults a Sandbox gets', async () => {
    await apply(sandboxTemplate(ns, 'python-agent'));
    const stored = await getJson('sbt', 'python-agent');
    expect(stored.spec).toMatchObject({
      replicas: 1,
      cleanup: { policy: 'Retain', ttlSecondsAfterUnreferenced: 300 },
      shellReaper: { enabled: false, gracePeriodSeconds: 5 },
      volumeClaimTemplates: [],
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' },
    });
    expect(stored.spec).not.toHaveProperty('operatingMode');
    expect(stored.spec).not.toHaveProperty('worktree');
  });

  it('apply a SandboxWarmPool, default its strategy, and scale it through /scale', async () => {
    await apply(sandboxWarmPool(ns, 'python-pool', { replicas: undefined }));
    expect((await getJson('sbwp', 'python-pool')).spec).toEqual({
      templateRef: { name: 'python-agent' },
      replicas: 1,
      updateStrategy: { type: 'OnReplenish' },
    });
    await kubectlOk(['scale', 'sbwp', 'python-pool', '-n', ns, '--replicas', '5']);
    expect((await getJson('sbwp', 'python-pool')).spec['replicas']).toBe(5);
    const scale = JSON.parse(
      await kubectlOk([
        'get',
        '--raw',
        `/apis/sandbox.agents.dev/v1alpha1/namespaces/${ns}/sandboxwarmpools/python-pool/scale`,
      ]),
    ) as { spec: { replicas: number } };
    expect(scale.spec.replicas).toBe(5);
  });

  it('refuses a scale beyond the bound, naming the field', async () => {
    const result = await kubectl([
      'scale',
      'sbwp',
      'python-pool',
      '-n',
      ns,
      '--replicas',
      String(WARM_POOL_REPLICAS_MAX + 1),
    ]);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('spec.replicas');
    expect(result.stderr).toContain(`should be less than or equal to ${WARM_POOL_REPLICAS_MAX}`);
  });

  it('apply a warm SandboxClaim and a cold one; `kubectl get` shows their columns', async () => {
    await apply(sandboxClaim(ns, 'claim-warm'));
    await apply(
      without(sandboxClaim(ns, 'claim-cold', { templateRef: { name: 'python-agent' } }), 'warmPoolRef'),
    );
    expect((await getJson('sbc', 'claim-cold')).spec['templateRef']).toEqual({ name: 'python-agent' });
    const header = (await kubectlOk(['get', 'sbc', '-n', ns])).split('\n')[0] ?? '';
    for (const column of ['POOL', 'SESSION', 'SANDBOX', 'LAUNCH', 'READY', 'AGE'])
      expect(header).toContain(column);
    const listed = await kubectlOk(['get', 'sandbox-operator', '-n', ns, '-o', 'name']);
    expect(listed).toContain('sandboxclaim.sandbox.agents.dev/claim-warm');
    expect(listed).toContain('sandboxwarmpool.sandbox.agents.dev/python-pool');
    expect(listed).toContain('sandboxtemplate.sandbox.agents.dev/python-agent');
  });
});

describe('examples/warm-pool.yaml', () => {
  it('applies, and applies again unchanged, with a clean server-side diff', async () => {
    const files = ['-n', exampleNs, '-f', 'examples/warm-pool.yaml'];
    await kubectlOk(['apply', '--server-side', '--field-manager=gitops', ...files]);
    const again = await kubectlOk(['apply', '--server-side', '--field-manager=gitops', ...files]);
    expect(again).toContain('sandboxtemplate.sandbox.agents.dev/python-agent serverside-applied');
    const diff = await kubectl(['diff', '--server-side', '--field-manager=gitops', ...files]);
    expect(diff.stdout).toBe('');
    expect(diff.exitCode).toBe(0);
  });
});

describe('creating a bad object', () => {
  it.each([
    {
      name: 'SandboxClaim naming both a pool and a template',
      object: sandboxClaim(ns, 'bad-both', { templateRef: { name: 'python-agent' } }),
      refusal: ['exactly one of spec.warmPoolRef and spec.templateRef must be set'],
    },
    {
      name: 'SandboxClaim naming neither',
      object: without(sandboxClaim(ns, 'bad-neither'), 'warmPoolRef'),
      refusal: ['exactly one of spec.warmPoolRef and spec.templateRef must be set'],
    },
    {
      name: 'Subagent SandboxClaim without a parent session',
      object: sandboxClaim(ns, 'bad-subagent', { role: 'Subagent' }),
      refusal: ['spec.parentSession is required when spec.role is Subagent'],
    },
    {
      name: 'SandboxWarmPool with negative replicas',
      object: sandboxWarmPool(ns, 'bad-negative', { replicas: -1 }),
      refusal: ['spec.replicas', 'should be greater than or equal to 0'],
    },
    {
      name: 'SandboxWarmPool beyond the replicas bound',
      object: sandboxWarmPool(ns, 'bad-many', { replicas: WARM_POOL_REPLICAS_MAX + 1 }),
      refusal: ['spec.replicas', `should be less than or equal to ${WARM_POOL_REPLICAS_MAX}`],
    },
    {
      name: 'SandboxWarmPool with an unknown strategy',
      object: sandboxWarmPool(ns, 'bad-strategy', { updateStrategy: { type: 'Rolling' } }),
      refusal: ['spec.updateStrategy.type: Unsupported value: "Rolling"'],
    },
    {
      name: 'SandboxWarmPool whose sandboxes’ names would not be DNS labels',
      object: sandboxWarmPool(ns, `p${'a'.repeat(57)}`),
      refusal: ['metadata.name must be at most 57 characters'],
    },
    {
      name: 'SandboxTemplate that idles without giving up its workspace (the Sandbox’s rule)',
      object: sandboxTemplate(ns, 'bad-idle', { idle: { suspendAfterSeconds: 60 } }),
      refusal: ['spec.idle suspends an idle sandbox'],
    },
    {
      name: 'SandboxTemplate with a worktree (a sandbox’s own, never a blueprint’s)',
      object: sandboxTemplate(ns, 'bad-worktree', { worktree: 'wt-1' }),
      refusal: ['unknown field "spec.worktree"'],
    },
  ])('refuses: $name', async ({ object, refusal }) => {
    await expectRefused(object, refusal);
  });
});

describe('changing a SandboxClaim', () => {
  it.each([
    {
      name: 'another pool',
      change: sandboxClaim(ns, 'claim-fixed', { warmPoolRef: { name: 'other-pool' } }),
      refusal: ['spec.warmPoolRef is immutable'],
    },
    {
      name: 'another session',
      change: sandboxClaim(ns, 'claim-fixed', { session: 'workspace_999' }),
      refusal: ['spec.session is immutable'],
    },
    {
      name: 'another route',
      change: sandboxClaim(ns, 'claim-fixed', { route: 'shared-control-v1/other' }),
      refusal: ['spec.route is immutable'],
    },
    {
      name: 'its worktree removed',
      change: without(sandboxClaim(ns, 'claim-fixed'), 'worktree'),
      refusal: ['spec.worktree cannot be added or removed after creation'],
    },
    {
      name: 'a template instead of its pool',
      change: without(
        sandboxClaim(ns, 'claim-fixed', { templateRef: { name: 'python-agent' } }),
        'warmPoolRef',
      ),
      refusal: ['spec.warmPoolRef cannot be added or removed after creation'],
    },
  ])('is refused: $name', async ({ change, refusal }) => {
    await apply(sandboxClaim(ns, 'claim-fixed'));
    await expectRefused(change, refusal);
  });

  it('keeps a template changeable: a pool sandbox copies it, so no sandbox changes with it', async () => {
    await apply(sandboxTemplate(ns, 'changing', { volumeClaimTemplates: [] }));
    const claims = [
      {
        metadata: { name: 'workspace' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    ];
    await apply(sandboxTemplate(ns, 'changing', { volumeClaimTemplates: claims }));
    expect((await getJson('sbt', 'changing')).spec['volumeClaimTemplates']).toHaveLength(1);
  });
});
