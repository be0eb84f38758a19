/** What a refused attach says, by why it was refused; the constructor's older four-argument form still works. */
import { describe, expect, it } from 'vitest';
import { SandboxDeletingError } from '../../../operator/client/session-references.ts';

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
