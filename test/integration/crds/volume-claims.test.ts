// spec.volumeClaimTemplates and spec.persistentVolumeClaimRetentionPolicy (issue 27, "Persistent workspace"):
// the API server itself refuses a bad template, naming the field and the limit, and any change after creation.
import { describe, expect, it } from 'vitest';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { sandbox, times, type Manifest } from './examples.ts';

const ns = testNamespace('volume-claims');

type Spec = Record<string, unknown>;

const claim = (name: string, spec: Spec = {}): Spec => ({
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
});

const withClaims = (n: string, templates: readonly Spec[], extra: Spec = {}): Manifest =>
  sandbox(ns, n, { volumeClaimTemplates: templates, ...extra });

const refusals: readonly { name: string; object: (n: string) => Manifest; refusal: readonly string[] }[] = [
  {
    name: 'five templates',
    object: (n) =>
      withClaims(
        n,
        times(5, (i) => claim(`w${i}`)),
      ),
    refusal: ['spec.volumeClaimTemplates: Too many: 5: must have at most 4 items'],
  },
  {
    name: 'a template name of 64 characters',
    object: (n) => withClaims(n, [claim('a'.repeat(64))]),
    refusal: ['spec.volumeClaimTemplates[0].metadata.name: Too long: may not be more than 63'],
  },
  {
    name: 'two templates of one name',
    object: (n) => withClaims(n, [claim('work'), claim('work')]),
    refusal: ['spec.volumeClaimTemplates: template names (metadata.name) must be unique'],
  },
  {
    name: 'a template named as a pod template volume',
    object: (n) => {
      const manifest = withClaims(n, [claim('work')]);
      const spec = manifest['spec'] as { podTemplate: { spec: Spec } };
      spec.podTemplate.spec['volumes'] = [{ name: 'work', emptyDir: {} }];
      return manifest;
    },
    refusal: ['must not be the name of a volume in spec.podTemplate.spec.volumes'],
  },
  {
    name: 'a storage request that is not a quantity',
    object: (n) => withClaims(n, [claim('work', { resources: { requests: { storage: 'lots' } } })]),
    refusal: ['spec.volumeClaimTemplates[0].spec.resources.requests.storage in body should match'],
  },
  {
    name: 'no access mode',
    object: (n) => withClaims(n, [claim('work', { accessModes: [] })]),
    refusal: ['spec.volumeClaimTemplates[0].spec.accessModes', 'should have at least 1 items'],
  },
  {
    name: 'a retention policy not in the enum',
    object: (n) =>
      withClaims(n, [claim('work')], { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep' } }),
    refusal: ['spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep"'],
  },
];

describe('a Sandbox with bad volume claim templates', () => {
  it.each(refusals.map((c, i) => ({ ...c, objectName: `bad-claims-${i}` })))(
    'is refused: $name',
    async ({ object, refusal, objectName }) => {
      const result = await kubectl(['apply', '-f', '-'], { input: JSON.stringify(object(objectName)) });
      expect(result.exitCode).not.toBe(0);
      for (const text of refusal) expect(result.stderr).toContain(text);
      const stored = await kubectl(['get', 'sandboxes.sandbox.agents.dev', objectName, '-n', ns]);
      expect(stored.stderr).toContain('NotFound');
    },
  );
});

describe('volume claim templates after creation', () => {
  it('defaults to none and Delete, and refuses templates added later', async () => {
    await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(sandbox(ns, 'later-claims')) });
    const spec = JSON.parse(
      await kubectlOk([
        'get',
        'sandboxes.sandbox.agents.dev',
        'later-claims',
        '-n',
        ns,
        '-o',
        'jsonpath={.spec}',
      ]),
    ) as Spec;
    expect(spec['volumeClaimTemplates']).toEqual([]);
    expect(spec['persistentVolumeClaimRetentionPolicy']).toEqual({ whenDeleted: 'Delete' });
    const result = await kubectl(['apply', '-f', '-'], {
      input: JSON.stringify(withClaims('later-claims', [claim('work')])),
    });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('spec.volumeClaimTemplates is immutable');
  });

  it('refuses a changed size, and lets the retention policy change', async () => {
    await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(withClaims('sized', [claim('work')])) });
    const resized = await kubectl(['apply', '-f', '-'], {
      input: JSON.stringify(
        withClaims('sized', [claim('work', { resources: { requests: { storage: '2Gi' } } })]),
      ),
    });
    expect(resized.exitCode).not.toBe(0);
    expect(resized.stderr).toContain('spec.volumeClaimTemplates is immutable');
    await kubectlOk(['apply', '-f', '-'], {
      input: JSON.stringify(
        withClaims('sized', [claim('work')], {
          persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain' },
        }),
      ),
    });
    expect(
      await kubectlOk([
        'get',
        'sandboxes.sandbox.agents.dev',
        'sized',
        '-n',
        ns,
        '-o',
        'jsonpath={.spec.persistentVolumeClaimRetentionPolicy.whenDeleted}',
      ]),
    ).toBe('Retain');
  });
});

describe('a persistent workspace and suspension', () => {
  it('lets a Sandbox with claims be suspended, idle or moved by a drain, without spec.workspace: Ephemeral', async () => {
    for (const [name, extra] of [
      ['kept-suspended', { operatingMode: 'Suspended' }],
      ['kept-idle', { idle: { suspendAfterSeconds: 60 } }],
      ['kept-moved', { disruption: { policy: 'Reschedule' } }],
    ] as const) {
      await kubectlOk(['apply', '-f', '-'], {
        input: JSON.stringify(withClaims(name, [claim('work')], extra)),
      });
      expect(
        await kubectlOk(['get', 'sandboxes.sandbox.agents.dev', name, '-n', ns, '-o', 'jsonpath={.spec}']),
      ).toContain(Object.keys(extra)[0]);
    }
  });
});
