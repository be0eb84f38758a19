/**
 * examples/ as a user reads them: every document is a valid Sandbox or SessionReference by the operator's
 * own schemas, every reference names a sandbox of its file, and the shared and isolated examples are what
 * their names say by the operator's one foreignness predicate. Each carries what it needs (the shell
 * reaper's ServiceAccount and binding) and names only images the local real node holds
 * (test/e2e/real-node/examples.test.ts runs them there).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  parseSandbox,
  parseSandboxClaim,
  parseSandboxTemplate,
  parseSandboxWarmPool,
  parseSessionReference,
} from '../../../operator/api/parse.ts';
import type { Sandbox, SessionReference } from '../../../operator/api/objects.ts';
import { isForeignReference } from '../../../operator/exclusivity/foreign.ts';
import { OPERATOR_RELEASE } from '@sandbox-operator/local-cluster';
import { EXAMPLE_AGENT_RUNTIME_IMAGE } from '@sandbox-operator/local-cluster/images/example-stand-in';
import { SHELL_IMAGE_NAME } from '@sandbox-operator/local-cluster/images/node-images';

const dir = join(import.meta.dirname, '..', '..', '..', 'examples');

async function load(file: string): Promise<{ sandboxes: Sandbox[]; references: SessionReference[] }> {
  const sandboxes: Sandbox[] = [];
  const references: SessionReference[] = [];
  for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
    const raw = doc.toJS() as { kind?: string; metadata?: object };
    // The shell reaper's ServiceAccount and RoleBinding: 'carry what the shell reaper needs' below.
    if (raw.kind !== 'Sandbox' && raw.kind !== 'SessionReference') continue;
    // Examples leave the namespace to `kubectl apply -n`.
    const object = { ...raw, metadata: { ...raw.metadata, namespace: 'team-a' } };
    const parsed = raw.kind === 'Sandbox' ? parseSandbox(object) : parseSessionReference(object);
    if (!parsed.ok) throw parsed.error;
    if (parsed.value.kind === 'Sandbox') sandboxes.push(parsed.value);
    else references.push(parsed.value);
  }
  return { sandboxes, references };
}

const foreignOf = ({ sandboxes, references }: Awaited<ReturnType<typeof load>>) =>
  references
    .filter((ref) =>
      isForeignReference({ worktree: ref.spec.worktree }, { worktree: sandboxes[0]?.spec.worktree }),
    )
    .map((ref) => ref.metadata.name);

describe('the examples', () => {
  it.each([
    'cleanup-policy.yaml',
    'idle-suspend.yaml',
    'isolated-sandbox.yaml',
    'persistent-workspace.yaml',
    'real-node-sandbox.yaml',
    'shared-sandbox.yaml',
  ])(
    '%s parses with the operator’s schemas, references only its own sandbox, and sets no namespace',
    async (file) => {
      const { sandboxes, references } = await load(file);
      expect(sandboxes).toHaveLength(1);
      for (const reference of references) expect(reference.spec.sandbox).toBe(sandboxes[0]?.metadata.name);
      expect(await readFile(join(dir, file), 'utf8')).not.toMatch(/^\s+namespace:/m);
    },
  );

  it('are exactly the eight documented files', async () => {
    expect((await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()).toEqual([
      'cleanup-policy.yaml',
      'idle-suspend.yaml',
      'isolated-sandbox.yaml',
      'persistent-workspace.yaml',
      'real-node-sandbox.yaml',
      'sandbox-claim.yaml',
      'shared-sandbox.yaml',
      'warm-pool.yaml',
    ]);
  });

  it('give the sandbox claim the warm pool of warm-pool.yaml, valid by the operator’s schemas', async () => {
    const [claim, ...rest] = await documents('sandbox-claim.yaml');
    expect(rest).toEqual([]);
    const parsed = parseSandboxClaim({
      ...claim,
      metadata: { ...(claim?.['metadata'] as object), namespace: 'team-a' },
    });
    if (!parsed.ok) throw parsed.error;
    const [, pool] = await documents('warm-pool.yaml');
    expect(parsed.value.spec.warmPoolRef?.name).toBe((pool?.['metadata'] as { name?: string }).name);
    expect(await readFile(join(dir, 'sandbox-claim.yaml'), 'utf8')).not.toMatch(/^\s+namespace:/m);
  });

  it('give the warm pool a template it names, both valid by the operator’s schemas', async () => {
    const [template, pool, ...rest] = await documents('warm-pool.yaml');
    expect(rest).toEqual([]);
    const parsedTemplate = parseSandboxTemplate({
      ...template,
      metadata: { ...(template?.['metadata'] as object), namespace: 'team-a' },
    });
    const parsedPool = parseSandboxWarmPool({
      ...pool,
      metadata: { ...(pool?.['metadata'] as object), namespace: 'team-a' },
    });
    if (!parsedTemplate.ok) throw parsedTemplate.error;
    if (!parsedPool.ok) throw parsedPool.error;
    expect(parsedPool.value.spec.templateRef.name).toBe(parsedTemplate.value.metadata.name);
    expect(parsedTemplate.value.spec.podTemplate.spec.containers[0]?.image).toBe(EXAMPLE_AGENT_RUNTIME_IMAGE);
    expect(await readFile(join(dir, 'warm-pool.yaml'), 'utf8')).not.toMatch(/^\s+namespace:/m);
  });

  it('keep the persistent workspace’s claim on Retain, mounted by its template name', async () => {
    const [sandbox] = (await load('persistent-workspace.yaml')).sandboxes;
    expect(sandbox?.spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: 'Retain' });
    expect(sandbox?.spec.volumeClaimTemplates?.map((t) => t.metadata.name)).toEqual(['workspace']);
    const [container] = sandbox?.spec.podTemplate.spec.containers ?? [];
    expect(container?.['volumeMounts']).toEqual([{ name: 'workspace', mountPath: '/workspace' }]);
  });

  it('suspend only the sandbox that gives up its workspace, idle after 10 minutes', async () => {
    const { sandboxes } = await load('idle-suspend.yaml');
    expect(sandboxes[0]?.spec).toMatchObject({
      workspace: 'Ephemeral',
      operatingMode: 'Running',
      idle: { suspendAfterSeconds: 600 },
    });
    for (const file of ['cleanup-policy.yaml', 'isolated-sandbox.yaml', 'shared-sandbox.yaml'])
      expect((await load(file)).sandboxes[0]?.spec.idle, file).toBeUndefined();
  });

  it('share the shared sandbox with one foreign session, and the isolated one with none', async () => {
    expect(foreignOf(await load('shared-sandbox.yaml'))).toEqual(['board-main']);
    expect(foreignOf(await load('isolated-sandbox.yaml'))).toEqual([]);
  });

  it('keep Git-managed sandboxes on Retain, and show the cleanup policy once', async () => {
    const policies = await Promise.all(
      ['shared-sandbox.yaml', 'isolated-sandbox.yaml', 'cleanup-policy.yaml'].map(
        async (file) => (await load(file)).sandboxes[0]?.spec.cleanup,
      ),
    );
    expect(policies).toEqual([
      { policy: 'Retain', ttlSecondsAfterUnreferenced: 300 },
      { policy: 'Retain', ttlSecondsAfterUnreferenced: 300 },
      { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 900 },
    ]);
  });

  it.each(['real-node-sandbox.yaml', 'shared-sandbox.yaml'])(
    '%s turns the shell reaper on and carries its ServiceAccount, bound to the chart’s ClusterRole',
    async (file) => {
      const { sandboxes } = await load(file);
      expect(sandboxes[0]?.spec.shellReaper.enabled).toBe(true);
      const values = parse(
        await readFile(join(dir, '..', 'charts/sandbox-operator/values.yaml'), 'utf8'),
      ) as {
        shellReaper: { serviceAccountName: string };
      };
      const account = values.shellReaper.serviceAccountName;
      const docs = await documents(file);
      expect(docs).toContainEqual({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: account },
        automountServiceAccountToken: false,
      });
      expect(docs).toContainEqual(
        expect.objectContaining({
          kind: 'RoleBinding',
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: `${OPERATOR_RELEASE.name}-shell-reaper`,
          },
          subjects: [{ kind: 'ServiceAccount', name: account }],
        }),
      );
    },
  );

  it('turn the shell reaper on only where they carry its ServiceAccount', async () => {
    for (const file of await yamlFiles()) {
      const { sandboxes } = await load(file);
      const carries = (await documents(file)).some((doc) => doc['kind'] === 'ServiceAccount');
      if (sandboxes.some((sandbox) => sandbox.spec.shellReaper.enabled)) expect(carries, file).toBe(true);
    }
  });

  it('name only images the local real node holds: the stand-in under the agent runtime’s name, or its shell', async () => {
    const images: string[] = [];
    for (const file of await yamlFiles())
      for (const sandbox of (await load(file)).sandboxes) {
        const spec = sandbox.spec.podTemplate.spec;
        for (const container of [
          ...((spec['initContainers'] ?? []) as { image: string }[]),
          ...spec.containers,
        ])
          images.push(container.image);
      }
    expect(images.length).toBeGreaterThanOrEqual(4);
    for (const image of images)
      expect(image === EXAMPLE_AGENT_RUNTIME_IMAGE || image.startsWith(`${SHELL_IMAGE_NAME}:`), image).toBe(
        true,
      );
  });
});

async function yamlFiles(): Promise<string[]> {
  return (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
}

async function documents(file: string): Promise<Record<string, unknown>[]> {
  return parseAllDocuments(await readFile(join(dir, file), 'utf8')).map(
    (doc) => doc.toJS() as Record<string, unknown>,
  );
}
