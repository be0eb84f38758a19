/**
 * The live comparison of references must not charge a re-created Sandbox with its past incarnation's
 * erase (seed 20261307 of the CI set: attach, delete the Sandbox, GitOps applies it again; the release
 * erased the reference, and the audit log judged that erase justified).
 */
import { describe, expect, it } from 'vitest';
import { SoakModel } from '../../soak/model.ts';

const NS = 'soak-model-0';

function model() {
  return new SoakModel(
    NS,
    [{ id: 'workspace_0', worktree: 'wt-1', role: 'Root' }],
    [
      {
        name: 'sbx-a',
        worktree: 'wt-1',
        replicas: 1,
        adopted: false,
        manifestKeepsAdoption: false,
        cleanupTtlSeconds: undefined,
        idleSeconds: undefined,
        manifestErase: false,
        workspace: false,
        shellReaper: false,
      },
    ],
  );
}

describe('the soak model', () => {
  it('knows a reference whose sandbox was deleted after it was established', () => {
    const m = model();
    const attach = m.begin('attach', 'workspace_0 -> sbx-a', { sandbox: 'sbx-a', reference: 'ref-a' });
    m.end(attach, 'attached');
    m.attached(attach, 'ref-a', 'sbx-a', m.session('workspace_0'));
    const ref = m.references.get('ref-a');
    if (!ref) throw new Error('no reference in the model');
    expect(m.sandboxDeletedSince(ref)).toBe(false);

    const refused = m.begin('delete-sandbox', 'user deletes sbx-a', { sandbox: 'sbx-a' });
    m.end(refused, 'HTTP 503');
    expect(m.sandboxDeletedSince(ref)).toBe(false);

    const deleted = m.begin('delete-sandbox', 'user deletes sbx-a', { sandbox: 'sbx-a' });
    m.end(deleted, 'ok');
    expect(m.sandboxDeletedSince(ref)).toBe(true);
  });
});
