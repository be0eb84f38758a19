/**
 * Issue 13's goals for the side-by-side run, judged on the figures of the same run: each line says the goal,
 * what was measured and whether it is met. A goal needing a subject that did not run says so. (The goals at
 * 10,000 sandboxes and of 8 workers against one are the controller bench's.)
 */
import { cpuPerSandbox, requestsPerSandbox, type SubjectResult } from './run-subject.ts';

type Goal = {
  readonly goal: string;
  /** The measured figure and the bound it is held to, or why it cannot be judged. */
  readonly judge: (subjects: Subjects) => { measured: number; bound: number; unit: string } | string;
};
type Subjects = { raw: SubjectResult | null; peer: SubjectResult | null; ours: SubjectResult };

/** `ours` against `factor` × a baseline's figure; null figures cannot be judged. */
function against(
  ours: number | null,
  base: number | null,
  factor: number,
  unit: string,
  missing: string,
): ReturnType<Goal['judge']> {
  if (ours === null || base === null) return missing;
  return { measured: ours, bound: base * factor, unit };
}

const GOALS: readonly Goal[] = [
  {
    goal: 'create -> pod Running p50 within 2x raw',
    judge: ({ raw, ours }) =>
      against(ours.createToRunningP50, raw?.createToRunningP50 ?? null, 2, 's', 'raw not run'),
  },
  {
    goal: "wall to all Running below agent-sandbox's",
    judge: ({ peer, ours }) => against(ours.wallRunning, peer?.wallRunning ?? null, 1, 's', 'peer not run'),
  },
  {
    goal: 'delete -> pod gone p50 within 2x raw',
    judge: ({ raw, ours }) =>
      against(ours.deleteToPodGoneP50, raw?.deleteToPodGoneP50 ?? null, 2, 's', 'raw not run'),
  },
  {
    goal: 'Sandbox gone within 0.5 s after its pods (p50s)',
    judge: ({ ours }) =>
      ours.deleteToSandboxGoneP50 === null
        ? 'not measured'
        : { measured: ours.deleteToSandboxGoneP50 - ours.deleteToPodGoneP50, bound: 500, unit: 's' },
  },
  {
    goal: 'API requests per deleted sandbox at most 8 (all clients)',
    judge: ({ ours }) => ({ measured: requestsPerSandbox(ours, 'remove'), bound: 8, unit: 'requests' }),
  },
  {
    goal: "kube-apiserver CPU, delete phase, within 1.5x the peer's",
    judge: ({ peer, ours }) =>
      against(ours.remove.apiserverCpuMs, peer?.remove.apiserverCpuMs ?? null, 1.5, 's', 'peer not run'),
  },
  ...(['create', 'remove'] as const).map((phase): Goal => ({
    goal: `operator CPU per sandbox, ${phase === 'create' ? 'create' : 'delete'}, within 2x the peer's`,
    judge: ({ peer, ours }) =>
      against(cpuPerSandbox(ours, phase), peer ? cpuPerSandbox(peer, phase) : null, 2, 'ms', 'peer not run'),
  })),
  {
    goal: "steady RSS within 2x the peer's",
    judge: ({ peer, ours }) =>
      against(ours.rss?.steady ?? null, peer?.rss?.steady ?? null, 2, 'MiB', 'peer not run'),
  },
];

/** Every figure is kept in ms; 's' shows it in seconds. */
const shown = (value: number, unit: string) => {
  if (unit === 's') return `${(value / 1000).toFixed(2)} s`;
  if (unit === 'ms') return `${value.toFixed(1)} ms`;
  return `${value.toFixed(unit === 'MiB' ? 0 : 2)} ${unit}`;
};

export function printGoals(subjects: Subjects): void {
  console.log("\n  Issue 13's goals, on this run's figures:");
  for (const { goal, judge } of GOALS) {
    const verdict = judge(subjects);
    if (typeof verdict === 'string') {
      console.log(`    ?    ${goal}: ${verdict}`);
      continue;
    }
    const met = verdict.measured <= verdict.bound;
    console.log(
      `    ${met ? 'met ' : 'NOT '} ${goal}: ${shown(verdict.measured, verdict.unit)} (bound ${shown(verdict.bound, verdict.unit)})`,
    );
  }
}
