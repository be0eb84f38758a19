import { describe, expect, it } from 'vitest';
import { Expectations } from '../../../../operator/controller/warm-pool/expectations.ts';

const seenAs = (states: Record<string, 'Present' | 'Deleting'>) => (name: string) => states[name] ?? 'Absent';

describe('Expectations', () => {
  it('counts a sandbox made until the cache shows it, then forgets it', () => {
    const expected = new Expectations(1000);
    expected.expectCreate('ns/pool', 'pool-a', 0);
    expected.expectCreate('ns/pool', 'pool-b', 0);
    expect(expected.creating('ns/pool', seenAs({}), 10)).toBe(2);
    expect(expected.creating('ns/pool', seenAs({ 'pool-a': 'Present' }), 10)).toBe(1);
    // Met once, gone for good: the cache losing it later does not bring it back.
    expect(expected.creating('ns/pool', seenAs({}), 20)).toBe(1);
  });

  it('drops a create that failed, and one the cache never showed after its time', () => {
    const expected = new Expectations(1000);
    expected.expectCreate('ns/pool', 'pool-a', 0);
    expected.expectCreate('ns/pool', 'pool-b', 0);
    expected.withdrawCreate('ns/pool', 'pool-a');
    expect(expected.creating('ns/pool', seenAs({}), 999)).toBe(1);
    expect(expected.creating('ns/pool', seenAs({}), 1000)).toBe(0);
  });

  it('counts a deleted sandbox as gone while the cache still shows it undeleted', () => {
    const expected = new Expectations(1000);
    expected.expectDelete('ns/pool', 'pool-a', 0);
    expect([...expected.deleting('ns/pool', seenAs({ 'pool-a': 'Present' }), 10)]).toEqual(['pool-a']);
    expect([...expected.deleting('ns/pool', seenAs({ 'pool-a': 'Deleting' }), 10)]).toEqual([]);
    expect([...expected.deleting('ns/pool', seenAs({ 'pool-a': 'Present' }), 10)]).toEqual([]);
  });

  it('keeps pools apart, and forgets a pool whole', () => {
    const expected = new Expectations(1000);
    expected.expectCreate('ns/a', 'a-1', 0);
    expected.expectCreate('ns/b', 'b-1', 0);
    expected.forget('ns/a');
    expect(expected.creating('ns/a', seenAs({}), 1)).toBe(0);
    expect(expected.creating('ns/b', seenAs({}), 1)).toBe(1);
  });
});
