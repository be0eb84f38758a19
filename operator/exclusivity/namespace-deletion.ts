/**
 * A namespace's deletion is the administrator's decision to destroy everything in it: its references go
 * with it (the namespace controller deletes them), and it releases what otherwise only an administrator
 * could clear — an overflowed index, or history that cannot be read (no ledger, an incomplete walk) — once
 * no reference is left. A foreign verdict is never lifted this way. Pure.
 */
import type { Verdict } from './exclusivity.ts';

const LIFTED: ReadonlySet<Verdict['verdict']> = new Set(['Overflowed', 'Unavailable', 'Incomplete']);

export function releasedByNamespaceDeletion(
  verdict: Verdict,
  namespaceTerminating: boolean,
  referencesLeft: number,
): boolean {
  return namespaceTerminating && referencesLeft === 0 && LIFTED.has(verdict.verdict);
}
