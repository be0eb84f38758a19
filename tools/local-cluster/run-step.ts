// Runs one build command with progress: a line when it starts, one every ~15 s while it runs, one
// when it ends; on failure a typed error naming the step, its output tail and how to retry.
import { spawn } from 'node:child_process';
import { LocalClusterError, tail } from './errors.ts';

export type BuildPhase = 'start' | 'running' | 'done' | 'failed' | 'cached' | 'waiting';

export interface BuildEvent {
  /** A tool name, or a group such as `kubernetes` for steps shared by several tools. */
  readonly subject: string;
  readonly version: string;
  readonly step: string;
  readonly phase: BuildPhase;
  readonly elapsedMs: number;
  readonly detail?: string;
}

export type BuildReporter = (event: BuildEvent) => void;

export function formatElapsed(ms: number): string {
  const seconds = Math.round(ms / 1000);
  const minutes = Math.floor(seconds / 60);
  return minutes > 0 ? `${minutes}m${String(seconds % 60).padStart(2, '0')}s` : `${seconds}s`;
}

/** `[local-cluster] kube-apiserver v1.36.3: go build (2m13s)` */
export function formatBuildEvent(event: BuildEvent): string {
  const head = `[local-cluster] ${event.subject} ${event.version}: ${event.step}`;
  const detail = event.detail === undefined ? '' : ` ${event.detail}`;
  switch (event.phase) {
    case 'start':
      return `${head} ...${detail}`;
    case 'running':
      return `${head} (${formatElapsed(event.elapsedMs)})${detail}`;
    case 'done':
      return `${head} done in ${formatElapsed(event.elapsedMs)}${detail}`;
    case 'failed':
      return `${head} FAILED after ${formatElapsed(event.elapsedMs)}${detail}`;
    case 'cached':
      return `${head}${detail}`;
    case 'waiting':
      return `${head} waiting (${formatElapsed(event.elapsedMs)})${detail}`;
  }
}

export interface StepSpec {
  readonly subject: string;
  readonly version: string;
  readonly step: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly report: BuildReporter;
  readonly retryHint: string;
  readonly progressEveryMs?: number;
}

export interface StepResult {
  readonly stdout: string;
  readonly elapsedMs: number;
}

const MAX_KEPT_OUTPUT = 64 * 1024;

export async function runStep(spec: StepSpec): Promise<StepResult> {
  const started = Date.now();
  const event = (phase: BuildPhase, detail?: string): BuildEvent => ({
    subject: spec.subject,
    version: spec.version,
    step: spec.step,
    phase,
    elapsedMs: Date.now() - started,
    ...(detail === undefined ? {} : { detail }),
  });
  spec.report(event('start'));
  const ticker = setInterval(() => {
    spec.report(event('running'));
  }, spec.progressEveryMs ?? 15_000);
  try {
    const { code, stdout, output, spawnError } = await execute(spec);
    if (spawnError !== undefined) {
      const missing = (spawnError as NodeJS.ErrnoException).code === 'ENOENT';
      spec.report(event('failed'));
      throw new LocalClusterError(
        missing ? 'go-missing' : 'build-step-failed',
        `${spec.subject} ${spec.version}: step "${spec.step}" could not run ${spec.command}`,
        {
          subject: spec.subject,
          step: spec.step,
          hint: missing
            ? 'Install Go >= 1.21 (it fetches the Go 1.26 toolchain itself) and put `go` on PATH.'
            : spec.retryHint,
        },
        { cause: spawnError },
      );
    }
    if (code !== 0) {
      spec.report(event('failed', `(exit ${code})`));
      throw new LocalClusterError(
        'build-step-failed',
        `${spec.subject} ${spec.version}: step "${spec.step}" failed (exit ${code}): ${spec.command} ${spec.args.join(' ')}`,
        { subject: spec.subject, step: spec.step, outputTail: tail(output, 40), hint: spec.retryHint },
      );
    }
    spec.report(event('done'));
    return { stdout, elapsedMs: Date.now() - started };
  } finally {
    clearInterval(ticker);
  }
}

interface Execution {
  readonly code: number | null;
  readonly stdout: string;
  /** stdout and stderr interleaved, last MAX_KEPT_OUTPUT characters. */
  readonly output: string;
  readonly spawnError?: Error;
}

function execute(spec: StepSpec): Promise<Execution> {
  return new Promise((resolve) => {
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-MAX_KEPT_OUTPUT);
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      keep(chunk);
    });
    child.stderr.on('data', keep);
    child.on('error', (error) => {
      resolve({ code: null, stdout, output, spawnError: error });
    });
    child.on('close', (code, signal) => {
      resolve({ code: code ?? (signal === null ? null : -1), stdout, output });
    });
  });
}
