/**
 * The modules mutation testing covers, each held to MODULE_THRESHOLD (docs/mutation-testing.md). Pure: reads
 * the mutants of Stryker's JSON report (mutation-testing-report-schema), so the unit test can feed it one.
 *
 * Each file Stryker mutated (stryker.config.json `mutate`) belongs to exactly one module here, and each module
 * to at least one mutated file: a file added to `mutate` without a module, or a module whose files were
 * renamed out of `mutate`, fails the run instead of going unchecked.
 */

/** A module: its name and its files (a path, or a folder ending in `/`). */
export type MutationModule = { readonly name: string; readonly paths: readonly string[] };

export const MODULE_THRESHOLD = 95;

export const MUTATION_MODULES: readonly MutationModule[] = [
  { name: 'exclusivity', paths: ['operator/exclusivity/'] },
  { name: 'ledger walk', paths: ['operator/ledger-walk/'] },
  { name: 'parse', paths: ['operator/api/parse.ts'] },
  { name: 'reconciliation outcome', paths: ['operator/api/reconciliation-outcome.ts'] },
  { name: 'deletion steps', paths: ['operator/controller/deletion/steps.ts'] },
  { name: 'deletion read-ahead', paths: ['operator/controller/deletion/read-ahead.ts'] },
  { name: 'error policy', paths: ['operator/runtime/error-policy.ts'] },
  { name: 'turn decision', paths: ['operator/sidecar/process/turns/turn-decision.ts'] },
  { name: 'retire plan', paths: ['operator/sidecar/process/retire/retire-plan.ts'] },
  { name: 'group judgement', paths: ['operator/sidecar/process/retire/group-judge.ts'] },
  { name: 'report-once rule', paths: ['operator/client/report-rule.ts'] },
  { name: 're-attach judgement', paths: ['operator/client/reattach.ts'] },
  { name: 'pod name judgement', paths: ['operator/controller/live/pod-name.ts'] },
  { name: 'workspace claims', paths: ['operator/controller/claims.ts'] },
  { name: 'suspension judgement', paths: ['operator/controller/suspension.ts'] },
  { name: 'resume judgement', paths: ['operator/client/resume.ts'] },
  { name: 'network policy rules', paths: ['operator/api/network-policy.ts'] },
  { name: 'drain plan', paths: ['operator/controller/disruption.ts'] },
  { name: 'drain notice', paths: ['operator/controller/disruption-notice.ts'] },
  { name: 'warm sandbox choice', paths: ['operator/controller/binding/choice.ts'] },
  { name: 'binding patch', paths: ['operator/controller/binding/binding-patch.ts'] },
  { name: 'sandbox claim status', paths: ['operator/controller/binding/claim-status.ts'] },
  { name: 'claim readiness', paths: ['operator/client/claim-readiness.ts'] },
  { name: 'claim watch decisions', paths: ['operator/client/claim-watch.ts'] },
  { name: 'warm pool plan', paths: ['operator/controller/warm-pool/plan.ts'] },
  { name: 'pool exemption', paths: ['operator/controller/pool-exemption.ts'] },
  { name: 'delete review', paths: ['operator/controller/delete-review.ts'] },
  { name: 'reference review', paths: ['operator/controller/reference-review.ts'] },
  { name: 'decision review', paths: ['operator/controller/decision-review.ts'] },
  { name: 'marker review', paths: ['operator/controller/marker-review.ts'] },
  { name: 'review routing', paths: ['operator/controller/review-routing.ts'] },
];

/** The part of Stryker's JSON report read here: each mutated file's mutants and their status. */
export type MutationReport = {
  readonly files: Readonly<Record<string, { readonly mutants: readonly { readonly status: string }[] }>>;
};

export type ModuleScore = {
  readonly name: string;
  readonly files: number;
  /** Killed or timed out. */
  readonly detected: number;
  /** Survived or not covered by any test. */
  readonly undetected: number;
  /** Stryker's mutation score: detected ÷ (detected + undetected), in percent; undefined with no mutant. */
  readonly score: number | undefined;
};

export type ScoreVerdict = {
  readonly scores: readonly ModuleScore[];
  /** What fails the run, one line each: a module below the threshold or without mutants, a file of none. */
  readonly failures: readonly string[];
};

// Compile and runtime errors, and ignored mutants, are no test's to kill: Stryker leaves them out of its
// score, and so does this.
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

const holds = (module: MutationModule, file: string): boolean =>
  module.paths.some((path) => (path.endsWith('/') ? file.startsWith(path) : file === path));

export function scoreModules(
  report: MutationReport,
  modules: readonly MutationModule[] = MUTATION_MODULES,
  threshold: number = MODULE_THRESHOLD,
): ScoreVerdict {
  // Stryker names files relative to the project, with `/` on every platform.
  const files = Object.entries(report.files);
  const failures: string[] = [];
  for (const [file] of files) {
    const owners = modules.filter((module) => holds(module, file));
    if (owners.length !== 1)
      failures.push(
        owners.length === 0
          ? `${file} was mutated but belongs to no module (scripts/mutation-modules.ts)`
          : `${file} belongs to ${owners.map((owner) => owner.name).join(' and ')}: one module each`,
      );
  }
  const scores = modules.map((module): ModuleScore => {
    const mine = files.filter(([file]) => holds(module, file));
    const statuses = mine.flatMap(([, { mutants }]) => mutants.map((mutant) => mutant.status));
    const detected = statuses.filter((status) => DETECTED.has(status)).length;
    const undetected = statuses.filter((status) => UNDETECTED.has(status)).length;
    const valid = detected + undetected;
    return {
      name: module.name,
      files: mine.length,
      detected,
      undetected,
      score: valid === 0 ? undefined : (100 * detected) / valid,
    };
  });
  for (const { name, score } of scores) {
    if (score === undefined) failures.push(`${name}: no mutant scored (is it still in stryker.config.json?)`);
    else if (score < threshold) failures.push(`${name}: ${score.toFixed(2)} % is below ${threshold} %`);
  }
  return { scores, failures };
}

/** One line per module, as the run prints them. */
export function scoreLines(scores: readonly ModuleScore[]): string[] {
  const width = Math.max(...scores.map((each) => each.name.length));
  return scores.map(({ name, files, detected, undetected, score }) => {
    const percent = score === undefined ? `${'—'.padStart(6)}  ` : `${score.toFixed(2).padStart(6)} %`;
    const survivors = undetected === 1 ? '1 survivor' : `${undetected} survivors`;
    const fileCount = files === 1 ? '1 file' : `${files} files`;
    return `${name.padEnd(width)}  ${percent}  ${detected}/${detected + undetected} killed, ${survivors}, ${fileCount}`;
  });
}
