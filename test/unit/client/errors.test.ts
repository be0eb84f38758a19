/** What a refused attach says, by why it was refused; the constructor's older four-argument form still works. */
import { describe, expect, it } from 'vitest';
import { SandboxDeletingError } from '../../../operator/client/session-references.ts';
import { SessionReferenceConflictError } from '../../../operator/client/conflict-error.ts';

describe('SandboxDeletingError', () => {
  it('names the reason, and says when the fence went up', () => {
    const deleting = new SandboxDeletingError('ns', 'sbx', '2026-12-02T07:00:00Z', 'Deleted', 'Deleting');
    expect(deleting.message).toBe(
      'sandbox ns/sbx is being deleted (since 2026-12-02T07:00:00Z); the attach was refused and withdrawn (Deleted)',
    );
    const unreadable = new SandboxDeletingError(
      'ns',
      'sbx',
      undefined,
      'Restored',
      'Unreadable',
      'metadata is not an object',
    );
    expect(unreadable).toMatchObject({ kind: 'SandboxDeleting', reason: 'Unreadable', since: undefined });
    expect(unreadable.message).toBe(
      'sandbox ns/sbx could not be read (metadata is not an object), so it is treated as being deleted; the attach was refused and withdrawn (Restored)',
    );
  });

  it('defaults the reason from `since`, as its four-argument form always meant', () => {
    expect(new SandboxDeletingError('ns', 'sbx', undefined, 'Deleted')).toMatchObject({ reason: 'Gone' });
    expect(new SandboxDeletingError('ns', 'sbx', undefined, 'Deleted').message).toBe(
      'sandbox ns/sbx does not exist; the attach was withdrawn (Deleted)',
    );
    expect(new SandboxDeletingError('ns', 'sbx', 't', 'Unchanged')).toMatchObject({ reason: 'Deleting' });
  });
});

describe('SessionReferenceConflictError', () => {
  it('names the field, what was found and what the attach asked for', () => {
    const error = new SessionReferenceConflictError('ns', 'sbx-1234', {
      kind: 'Differs',
      field: 'worktree',
      requested: 'wt-1',
      found: null,
    });
    expect(error).toMatchObject({
      kind: 'SessionReferenceConflict',
      name: 'SessionReferenceConflictError',
      namespace: 'ns',
      reference: 'sbx-1234',
      field: 'worktree',
      requested: 'wt-1',
      found: null,
    });
    expect(error.message).toBe(
      'sessionreference ns/sbx-1234 already exists with spec.worktree none, not "wt-1" as this attach asks: it ' +
        'was not created for this session, so it is not re-attached (nothing was written; choose another session ' +
        'id, or have an administrator remove it)',
    );
  });
});
