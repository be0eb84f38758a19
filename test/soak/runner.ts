/**
 * Runs many sequences side by side, each as its own fast-check property run with its own seed, so any
 * one is replayed alone (`SOAK_SEEDS=<seed>`) and a failure shrinks to its shortest failing trace while
 * the others go on. Shrinking is bounded (`shrinkRuns` further sequences), since each run is a real one.
 */
import * as fc from 'fast-check';
import pLimit from 'p-limit';
import { sequenceArb } from './commands.ts';
import { runSequence, type SequenceResult, type SoakEnv } from './sequence.ts';
import type { Violation } from './invariants.ts';
import { addCoverage } from './coverage.ts';

export class SoakViolation extends Error {
  constructor(readonly result: SequenceResult) {
    super(`${result.violations.length} violation(s) in ${result.namespace}`);
    this.name = 'SoakViolation';
  }
}

export type SeedOutcome = {
  readonly seed: number;
  /** Sequences this seed ran: 1, plus its shrink runs. */
  readonly runs: number;
  readonly operations: number;
  /** The first failing run's violations, and the shortest failing run (after shrinking). */
  readonly first: SequenceResult | undefined;
  readonly shortest: SequenceResult | undefined;
  /** The last sequence this seed ran (for SOAK_TRACE=1). */
  readonly last: SequenceResult | undefined;
  readonly counterexample: string | undefined;
  readonly path: string | undefined;
  readonly error: string | undefined;
  readonly releaseMs: readonly number[];
  readonly namespaceMs: readonly number[];
  /** What issue 25's judgements had to judge, summed over this seed's runs. */
  readonly coverage: Readonly<Record<string, number>>;
};

export type SoakPlan = {
  readonly seeds: readonly number[];
  readonly parallel: number;
  readonly shrinkRuns: number;
  /** Replay one shrink path of a single seed (fast-check's counterexamplePath). */
  readonly path?: string;
};

/** The invariants in the order a failure is named by: a stopped pod first, a stuck namespace last. */
const PRIORITY = [
  'no-wrongful-stop',
  'pool-kept',
  'guarded-write',
  'guarded-pods',
  'isolated',
  'operator-admitted',
  'no-lost-reference',
  'cleanup-unreferenced',
  'fence',
  'final-decision',
  'legacy-marker',
  'late-reference',
  'bounded-release',
  'pool-settled',
  'clean-namespace',
];

export function primarySignature(violations: readonly Violation[]): string | undefined {
  return [...violations].sort((a, b) => PRIORITY.indexOf(a.invariant) - PRIORITY.indexOf(b.invariant))[0]
    ?.signature;
}

export async function runSeed(
  env: SoakEnv,
  seed: number,
  shrinkRuns: number,
  path?: string,
): Promise<SeedOutcome> {
  let runs = 0;
  let operations = 0;
  let first: SequenceResult | undefined;
  let shortest: SequenceResult | undefined;
  let last: SequenceResult | undefined;
  const releaseMs: number[] = [];
  const namespaceMs: number[] = [];
  const coverage: Record<string, number> = {};
  // A harness error (not a violation) is shrunk too, within the same budget: unbounded, a sequence the harness
  // cannot set up would rerun until the test's timeout.
  let broken = false;
  const property = fc.asyncProperty(sequenceArb, async ({ setup, steps }) => {
    if ((first !== undefined || broken) && runs > shrinkRuns) return; // shrink budget spent
    runs++;
    const result = await runSequence(env, setup, steps).catch((error: unknown) => {
      broken = true;
      throw error;
    });
    last = result;
    operations += result.operations;
    releaseMs.push(...result.releaseMs);
    if (result.namespaceMs !== undefined) namespaceMs.push(result.namespaceMs);
    addCoverage(coverage, result.coverage);
    // Shrink toward the first failure's own defect, not toward whatever fails most easily.
    const target = first === undefined ? undefined : primarySignature(first.violations);
    if (result.violations.some((v) => target === undefined || v.signature === target)) {
      first ??= result;
      shortest = result;
      throw new SoakViolation(result);
    }
  });
  const details = await fc.check(property, {
    seed,
    numRuns: 1,
    ...(path === undefined ? {} : { path }),
    ...(shrinkRuns === 0 ? { endOnFailure: true } : {}),
  });
  const error =
    details.failed && !(details.errorInstance instanceof SoakViolation)
      ? String(details.errorInstance)
      : undefined;
  return {
    seed,
    runs,
    operations,
    first,
    shortest,
    last,
    counterexample: details.counterexample ? fc.stringify(details.counterexample[0].steps) : undefined,
    path: details.counterexamplePath ?? undefined,
    error,
    releaseMs,
    namespaceMs,
    coverage,
  };
}

export async function runPlan(
  env: SoakEnv,
  plan: SoakPlan,
  onSeed: (o: SeedOutcome) => void,
): Promise<SeedOutcome[]> {
  const limit = pLimit(plan.parallel);
  return Promise.all(
    plan.seeds.map((seed) =>
      limit(async () => {
        const outcome = await runSeed(env, seed, plan.shrinkRuns, plan.path);
        onSeed(outcome);
        return outcome;
      }),
    ),
  );
}

export function violationsOf(outcomes: readonly SeedOutcome[]): { seed: number; violation: Violation }[] {
  return outcomes.flatMap((o) =>
    (o.first?.violations ?? []).map((violation) => ({ seed: o.seed, violation })),
  );
}
