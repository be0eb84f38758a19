import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../../operator/exclusivity/exclusivity.ts';
import { releasedByNamespaceDeletion } from '../../../operator/exclusivity/namespace-deletion.ts';

const verdict = (kind: Verdict['verdict']) => ({ verdict: kind }) as Verdict;

describe('a terminating namespace', () => {
  it('lifts only the verdicts an administrator could otherwise clear, once no reference is left', () => {
    for (const kind of ['Overflowed', 'Unavailable', 'Incomplete'] as const)
      expect(releasedByNamespaceDeletion(verdict(kind), true, 0), kind).toBe(true);
    expect(releasedByNamespaceDeletion(verdict('Foreign'), true, 0)).toBe(false);
    expect(releasedByNamespaceDeletion(verdict('Exclusive'), true, 0)).toBe(false);
  });

  it('lifts nothing while a reference is left, or while the namespace lives', () => {
    expect(releasedByNamespaceDeletion(verdict('Unavailable'), true, 1)).toBe(false);
    expect(releasedByNamespaceDeletion(verdict('Overflowed'), false, 0)).toBe(false);
  });
});
