/**
 * The per-sandbox reference index: which sessions use a sandbox, attached or detached (tombstones).
 *
 * Guarantees: an index past either capacity limit (512 references, 96 KiB) is `overflowed`, and an
 * overflowed index stays overflowed (the latch persisted in status) until an explicit erase. Every
 * exclusivity question about an overflowed index answers "not exclusive".
 */
import type { IndexLimits } from '../api/limits.ts';
import { referenceBytes, type ReferenceEntry } from './reference.ts';

export type CapacityLimit = 'References' | 'Bytes';

/** A recorded overflow: which limit, the observed value, the limit's value. */
export type CapacityLatch = {
  readonly limit: CapacityLimit;
  readonly observed: number;
  readonly max: number;
};

type Common = {
  /** Sorted by name. Kept even when overflowed, for display; never used to clear a sandbox then. */
  readonly entries: readonly ReferenceEntry[];
  readonly attached: number;
  readonly detached: number;
  readonly bytes: number;
};

export type ReferenceIndex =
  | (Common & { readonly overflowed: false })
  | (Common & { readonly overflowed: true; readonly latch: CapacityLatch });

export const EMPTY_INDEX: ReferenceIndex = {
  overflowed: false,
  entries: [],
  attached: 0,
  detached: 0,
  bytes: 0,
};

export function buildReferenceIndex(
  references: Iterable<ReferenceEntry>,
  limits: IndexLimits,
  latched?: CapacityLatch,
): ReferenceIndex {
  const entries = [...references].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let bytes = 0;
  let attached = 0;
  for (const entry of entries) {
    bytes += referenceBytes(entry);
    if (entry.state === 'Attached') attached += 1;
  }
  const common: Common = { entries, attached, detached: entries.length - attached, bytes };
  const latch = latched ?? exceeded(entries.length, bytes, limits);
  return latch ? { ...common, overflowed: true, latch } : { ...common, overflowed: false };
}

function exceeded(count: number, bytes: number, limits: IndexLimits): CapacityLatch | undefined {
  if (count > limits.maxReferences)
    return { limit: 'References', observed: count, max: limits.maxReferences };
  if (bytes > limits.maxBytes) return { limit: 'Bytes', observed: bytes, max: limits.maxBytes };
  return undefined;
}
