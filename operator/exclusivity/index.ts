/**
 * The reference index and the exclusivity verdict: pure functions of references, limits and legacy
 * evidence. `hasForeignReference` in foreign.ts is the only place foreignness is decided.
 */
export * from './reference.ts';
export * from './reference-index.ts';
export * from './foreign.ts';
export * from './exclusivity.ts';
export * from './prune.ts';
export * from './namespace-deletion.ts';
