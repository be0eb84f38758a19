/**
 * examples/ as a user reads them: every document is a valid Sandbox or SessionReference by the operator's
 * own schemas, every reference names a sandbox of its file, and the shared and isolated examples are what
 * their names say by the operator's one foreignness predicate.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseSandbox, parseSessionReference } from '../../../operator/api/parse.ts';
import type { Sandbox, SessionReference } from '../../../operator/api/objects.ts';
import { isForeignReference } from '../../../operator/exclusivity/foreign.ts';

const dir = join(import.meta.dirname, '..', '..', '..', 'examples');

async function load(file: string): Promise<{ sandboxes: Sandbox[]; references: SessionReference[] }> {
  const sandboxes: Sandbox[] = [];
  const references: SessionReference[] = [];
  for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
    const raw = doc.toJS() as { kind?: string; metadata?: object };
    // real-node-sandbox.yaml also carries the sidecar's ServiceAccount and RoleBinding.
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
  it.each(['cleanup-policy.yaml', 'isolated-sandbox.yaml', 'real-node-sandbox.yaml', 'shared-sandbox.yaml'])(
    '%s parses with the operator’s schemas, references only its own sandbox, and sets no namespace',
    async (file) => {
      const { sandboxes, references } = await load(file);
      expect(sandboxes).toHaveLength(1);
      for (const reference of references) expect(reference.spec.sandbox).toBe(sandboxes[0]?.metadata.name);
      expect(await readFile(join(dir, file), 'utf8')).not.toMatch(/^\s+namespace:/m);
    },
  );

  it('are exactly the four documented files', async () => {
    expect((await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()).toEqual([
      'cleanup-policy.yaml',
      'isolated-sandbox.yaml',
      'real-node-sandbox.yaml',
      'shared-sandbox.yaml',
    ]);
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
});
