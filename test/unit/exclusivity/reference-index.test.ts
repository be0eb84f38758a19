import { describe, expect, it } from 'vitest';
import { INDEX_LIMITS, parseSessionReference } from '../../../operator/api/index.ts';
import {
  buildReferenceIndex,
  hasForeignReference,
  referenceBytes,
  referenceEntryOf,
} from '../../../operator/exclusivity/index.ts';
import { attached, ownReferences, reference, sessionReferenceObject, tombstone } from '../fixtures.ts';

const target = { worktree: 'wt-1' };

describe('buildReferenceIndex', () => {
  it.each([
    [511, false],
    [512, false],
    [513, true],
  ])('with %i references is overflowed: %s', (count, overflowed) => {
    const index = buildReferenceIndex(ownReferences(count), INDEX_LIMITS);
    expect(index.overflowed).toBe(overflowed);
    expect(hasForeignReference(index, target)).toBe(overflowed);
  });

  it('is not overflowed at exactly the byte limit and is one byte past it', () => {
    const one = ownReferences(1)[0]!;
    const perEntry = referenceBytes(one);
    const limits = { maxReferences: 512, maxBytes: perEntry * 3 };
    expect(buildReferenceIndex(ownReferences(3), limits)).toMatchObject({
      overflowed: false,
      bytes: perEntry * 3,
    });
    const tighter = { maxReferences: 512, maxBytes: perEntry * 3 - 1 };
    expect(buildReferenceIndex(ownReferences(3), tighter)).toMatchObject({
      overflowed: true,
      latch: { limit: 'Bytes', observed: perEntry * 3, max: perEntry * 3 - 1 },
    });
  });

  it('overflows the 96 KiB budget with long routes well before 512 references', () => {
    const longRoute = 'r'.repeat(500);
    const refs = Array.from({ length: 200 }, (_, i) => reference({ name: `r-${i}`, route: longRoute }));
    const index = buildReferenceIndex(refs, INDEX_LIMITS);
    expect(index).toMatchObject({ overflowed: true, latch: { limit: 'Bytes', max: 96 * 1024 } });
  });

  it('counts multibyte ids by UTF-8 bytes, not characters', () => {
    const ascii = reference({ name: 'a', route: 'xx' });
    const multibyte = reference({ name: 'a', route: 'éé' });
    expect(referenceBytes(multibyte) - referenceBytes(ascii)).toBe(2);
  });

  it('stays overflowed while the latch is set, even under the limits', () => {
    const latch = { limit: 'References' as const, observed: 600, max: 512 };
    const index = buildReferenceIndex(ownReferences(2), INDEX_LIMITS, latch);
    expect(index).toMatchObject({ overflowed: true, latch });
  });

  it('counts attached references and tombstones, sorted by name', () => {
    const index = buildReferenceIndex(
      [tombstone('b', 'wt-1'), attached('a', 'wt-2'), tombstone('c', undefined)],
      INDEX_LIMITS,
    );
    expect(index).toMatchObject({ attached: 1, detached: 2 });
    expect(index.entries.map((e) => e.name)).toEqual(['a', 'b', 'c']);
  });
});

describe('the byte count against the 96 KiB budget', () => {
  // Expected figures are counted by hand from the JSON each entry costs, not recomputed with referenceBytes.
  const base = { name: 'a', session: 's', worktree: 'w', route: 'r' };

  it('is the UTF-8 length of the identity fields as JSON, absent fields as null', () => {
    // ["a","s","w","Attached","Root","r",null]
    expect(referenceBytes(reference(base))).toBe(40);
    // ["a","s",null,"Attached","Root","r",null]
    expect(referenceBytes(reference({ ...base, worktree: undefined }))).toBe(41);
    // ["a","s","w","Detached","Subagent","r","p"]
    expect(
      referenceBytes(reference({ ...base, state: 'Detached', role: 'Subagent', parentSession: 'p' })),
    ).toBe(43);
  });

  it('counts multibyte characters by their UTF-8 bytes and escapes as written', () => {
    // é is 2 bytes and 😀 4 in UTF-8, against 1 for r: 40 - 1 + 6.
    expect(referenceBytes(reference({ ...base, route: 'é😀' }))).toBe(45);
    // A quote is escaped: a"b is written a\"b, 4 bytes against 1 for r: 40 - 1 + 4.
    expect(referenceBytes(reference({ ...base, route: 'a"b' }))).toBe(43);
  });

  it('allows exactly 96 KiB and overflows one byte past it', () => {
    expect(INDEX_LIMITS.maxBytes).toBe(98_304);
    // ["r-000","s","wt-1","Attached","Root","<route>",null] costs 46 bytes plus the route: 192 × (46 + 466) = 98 304.
    const refs = (lastRoute: number) =>
      Array.from({ length: 192 }, (_, i) =>
        reference({
          name: `r-${String(i).padStart(3, '0')}`,
          session: 's',
          route: 'x'.repeat(i === 191 ? lastRoute : 466),
        }),
      );
    expect(buildReferenceIndex(refs(466), INDEX_LIMITS)).toMatchObject({ overflowed: false, bytes: 98_304 });
    expect(buildReferenceIndex(refs(467), INDEX_LIMITS)).toMatchObject({
      overflowed: true,
      bytes: 98_305,
      latch: { limit: 'Bytes', observed: 98_305, max: 98_304 },
    });
  });
});

describe('the index order', () => {
  it('sorts any number of references by name, whatever order they arrive in', () => {
    // 200 names visited in a scrambled order (73 is coprime to 200), past the length sorted by insertion alone.
    const names = Array.from({ length: 200 }, (_, i) => `n-${String(i).padStart(3, '0')}`);
    const scrambled = names.map((_, i) => attached(names[(i * 73) % 200]!, 'wt-1'));
    expect(buildReferenceIndex(scrambled, INDEX_LIMITS).entries.map((e) => e.name)).toEqual(names);
  });
});

describe('references read from the API server', () => {
  it('become index entries with their identity fields', () => {
    const parsed = parseSessionReference(sessionReferenceObject({ worktree: 'wt-2', state: 'Detached' }));
    expect(parsed.ok && referenceEntryOf(parsed.value)).toMatchObject({
      name: 'sref-a',
      worktree: 'wt-2',
      state: 'Detached',
    });
  });

  it('carry whether their session has a turn Running, and only then, and cost no bytes for it', () => {
    const withTurn = (phase: 'Running' | 'Completed' | undefined) => {
      const object = sessionReferenceObject({});
      return referenceEntryOf(
        phase === undefined
          ? object
          : { ...object, status: { turn: { id: 't-1', phase, origin: 'Unknown' } } },
      );
    };
    expect(withTurn('Running').turnRunning).toBe(true);
    expect('turnRunning' in withTurn('Completed')).toBe(false);
    expect('turnRunning' in withTurn(undefined)).toBe(false);
    // A status the sidecar wrote before any turn (shells only): no turn, nothing running.
    const shellsOnly = { ...sessionReferenceObject({}), status: { detachedAt: '2026-11-30T12:00:00Z' } };
    expect('turnRunning' in referenceEntryOf(shellsOnly)).toBe(false);
    expect(referenceBytes(withTurn('Running'))).toBe(referenceBytes(withTurn(undefined)));
  });

  it('refuse a malformed reference with a typed error naming the field', () => {
    const parsed = parseSessionReference(sessionReferenceObject({ worktree: 'x'.repeat(129) }));
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.error).toMatchObject({
      kind: 'MalformedObject',
      field: 'spec.worktree',
      objectKey: 'team-a/sref-a',
    });
    expect(!parsed.ok && parsed.error.message).toMatch(
      /SessionReference team-a\/sref-a is malformed: spec\.worktree: .*128/,
    );
  });

  it('refuse an unknown state rather than defaulting it', () => {
    const parsed = parseSessionReference(sessionReferenceObject({ state: 'Gone' }));
    expect(!parsed.ok && parsed.error.field).toBe('spec.state');
  });

  it('default an absent state to Attached, as the API server does', () => {
    const parsed = parseSessionReference(sessionReferenceObject({ state: undefined }));
    expect(parsed.ok && parsed.value.spec.state).toBe('Attached');
  });
});
