import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import { describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../operator/api/objects.ts';
import { incarnationOf, stalenessOf } from '../../../operator/controller/incarnation.ts';
import { sandbox } from '../builders.ts';

const cached: Sandbox = sandbox('reborn')
  .inNamespace('team-a')
  .withMetadata({ uid: 'uid-1' })
  .deleting('2026-12-01T00:00:00Z')
  .build();

describe('stalenessOf', () => {
  it('is Current only while the API server holds the same, deleting incarnation', () => {
    expect(
      stalenessOf(cached, {
        uid: 'uid-1',
        deleting: true,
        statusWritten: true,
        finalizers: [EXCLUSIVITY_FINALIZER],
      }),
    ).toBe('Current');
    expect(stalenessOf(cached, undefined)).toBe('Gone');
    expect(
      stalenessOf(cached, {
        uid: 'uid-2',
        deleting: true,
        statusWritten: true,
        finalizers: [EXCLUSIVITY_FINALIZER],
      }),
    ).toBe('Replaced');
    expect(
      stalenessOf(cached, {
        uid: 'uid-2',
        deleting: false,
        statusWritten: true,
        finalizers: [EXCLUSIVITY_FINALIZER],
      }),
    ).toBe('Replaced');
    expect(
      stalenessOf(cached, {
        uid: 'uid-1',
        deleting: false,
        statusWritten: true,
        finalizers: [EXCLUSIVITY_FINALIZER],
      }),
    ).toBe('NotDeleting');
  });

  it('is EraseRecorded when the cache shows an erase pending that the API server’s status records as done', () => {
    const live = {
      uid: 'uid-1',
      deleting: true,
      statusWritten: true,
      finalizers: [EXCLUSIVITY_FINALIZER],
      erasedFor: 'INC-1',
    };
    expect(stalenessOf(cached, live, 'INC-1')).toBe('EraseRecorded');
    // Another request, or none pending in the cache: the erase recorded is not this turn's concern.
    expect(stalenessOf(cached, live, 'INC-2')).toBe('Current');
    expect(stalenessOf(cached, live)).toBe('Current');
    expect(
      stalenessOf(cached, { uid: 'uid-1', deleting: true, statusWritten: true, finalizers: [] }, 'INC-1'),
    ).toBe('Current');
  });
});

describe('incarnationOf', () => {
  it('binds a write to the uid, and to no uid at all when the cache has none (every test then fails)', () => {
    expect(incarnationOf(cached)).toEqual({ namespace: 'team-a', name: 'reborn', uid: 'uid-1' });
    const { uid: _uid, ...metadata } = cached.metadata;
    expect(incarnationOf({ ...cached, metadata }).uid).toBe('');
  });
});
