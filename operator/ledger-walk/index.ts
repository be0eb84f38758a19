/**
 * The bounded legacy reconciliation for sandboxes older than the reference index (docs/legacy-reconciliation.md): ports for the
 * session ledger and runtime locator, the walk, and its outcome. No HTTP here; its clients live in ./adapters.
 */
export * from './ports.ts';
export * from '../api/reconciliation-outcome.ts';
export * from './owner-verdict.ts';
export * from './walk.ts';
