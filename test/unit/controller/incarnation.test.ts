import { describe, expect, it } from 'vitest';
import { API_VERSION, SANDBOX } from '../../../operator/api/names.ts';
import type { Sandbox } from '../../../operator/api/objects.ts';
import { incarnationOf, stalenessOf } from '../../../operator/controller/incarnation.ts';

const cached: Sandbox = {
  apiVersion: API_VERSION,
  kind: SANDBOX.kind,
  metadata: { name: 'reborn', namespace: 'team-a', uid: 'uid-1', deletionTimestamp: '2026-12-01T00:00:00Z' },
  spec: { replicas: 1, podTemplate: { spec: { containers: [{ name: 'agent', image: 'agent:1' }] } } },
} as Sandbox;

describe('stalenessOf', () => {
  it('is Current only while the API server holds the same, deleting incarnation', () => {
    expect(stalenessOf(cached, { uid: 'uid-1', deleting: true })).toBe('Current');
    expect(stalenessOf(cached, undefined)).toBe('Gone');
    expect(stalenessOf(cached, { uid: 'uid-2', deleting: true })).toBe('Replaced');
    expect(stalenessOf(cached, { uid: 'uid-2', deleting: false })).toBe('Replaced');
    expect(stalenessOf(cached, { uid: 'uid-1', deleting: false })).toBe('NotDeleting');
  });
});

describe('incarnationOf', () => {
  it('binds a write to the uid, and to no uid at all when the cache has none (every test then fails)', () => {
    expect(incarnationOf(cached)).toEqual({ namespace: 'team-a', name: 'reborn', uid: 'uid-1' });
    const { uid: _uid, ...metadata } = cached.metadata;
    expect(incarnationOf({ ...cached, metadata }).uid).toBe('');
  });
});
