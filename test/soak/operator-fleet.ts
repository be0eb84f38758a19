/**
 * The operator as its own process (`operator/cli/main.ts`, compiled as the image runs it), one or two replicas (two elect a leader on a
 * Lease), talking to the API server through the fault proxy; a chaos loop SIGKILLs a replica at random
 * moments and restarts it. Kills and unexpected exits are recorded with their times, so a failing trace
 * can be read against them. Each incarnation's output goes to its own log file.
 *
 * The time to the next kill counts from a working operator (a replica that has said it is reconciling), not
 * from the last kill: on a loaded machine a start takes seconds, and a timer counted from the kill would
 * charge the liveness bounds with an operator that never got to run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { seededRandom } from './fault-proxy.ts';

export type FleetSettings = {
  /** The compiled operator's entry point (the soak's global setup builds it). */
  readonly main: string;
  readonly replicas: number;
  /** A kill every uniformly [min, max] ms; null: no kills. */
  readonly killEveryMs: readonly [number, number] | null;
  readonly restartAfterMs: readonly [number, number];
  readonly logDir: string;
  readonly kubeconfig: string;
  readonly seed: number;
  readonly flags: readonly string[];
  /** Flags of one replica alone (its own listening ports), by its index; kept across its restarts. */
  readonly replicaFlags?: (index: number) => readonly string[];
};

export type FleetEvent = { readonly at: number; readonly replica: number; readonly what: string };

type Replica = {
  child: ChildProcess;
  exited: Promise<void>;
  killedByUs: boolean;
  incarnation: number;
  working: boolean;
};

/** The line the operator logs once its caches are synced and its workers run (operator/controller/wiring/manager.ts). */
const WORKING = '"msg":"reconciling sandboxes"';

export class OperatorFleet {
  private readonly replicas: (Replica | undefined)[] = [];
  private readonly random: () => number;
  private stopping = false;
  private chaos: NodeJS.Timeout | undefined;
  readonly events: FleetEvent[] = [];
  kills = 0;
  crashes = 0;

  constructor(private readonly settings: FleetSettings) {
    this.random = seededRandom(settings.seed);
  }

  /** The replicas must not outlive the soak, even when it is stopped without its afterAll. */
  private readonly killAll = () => {
    for (const replica of this.replicas) replica?.child.kill('SIGKILL');
  };

  start(): void {
    process.once('exit', this.killAll);
    for (let i = 0; i < this.settings.replicas; i++) this.launch(i, 0);
    this.scheduleKill();
  }

  private between([min, max]: readonly [number, number]): number {
    return min + Math.floor(this.random() * (max - min));
  }

  private launch(index: number, incarnation: number): void {
    const log = createWriteStream(join(this.settings.logDir, `operator-${index}.log`), { flags: 'a' });
    const child = spawn(
      process.execPath,
      [
        this.settings.main,
        '--leader-elect',
        String(this.settings.replicas > 1),
        '--identity',
        `soak-${index}-${incarnation}`,
        '--probe-bind',
        '127.0.0.1:0',
        ...this.settings.flags,
        ...(this.settings.replicaFlags?.(index) ?? []),
      ],
      {
        env: { ...process.env, KUBECONFIG: this.settings.kubeconfig, SANDBOX_OPERATOR_LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    let tail = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (replica.working) return;
      const seen = tail + chunk.toString('utf8');
      if (seen.includes(WORKING)) {
        replica.working = true;
        this.events.push({ at: Date.now(), replica: index, what: 'reconciling' });
        this.onWorking?.();
      } else tail = seen.slice(-WORKING.length);
    });
    const replica: Replica = {
      child,
      killedByUs: false,
      working: false,
      incarnation,
      exited: once(child, 'exit').then(([code, signal]) => {
        log.end();
        if (this.stopping) return;
        if (!replica.killedByUs) {
          this.crashes++;
          this.events.push({
            at: Date.now(),
            replica: index,
            what: `exited by itself (${String(signal ?? code)})`,
          });
        }
        setTimeout(() => {
          if (!this.stopping) this.launch(index, incarnation + 1);
        }, this.between(this.settings.restartAfterMs));
      }),
    };
    this.replicas[index] = replica;
    this.events.push({ at: Date.now(), replica: index, what: `started (pid ${child.pid ?? '?'})` });
  }

  /** Called when a replica starts reconciling; set while the chaos loop waits for one. */
  private onWorking: (() => void) | undefined;

  private someoneWorking(): boolean {
    return this.replicas.some(
      (r) => r !== undefined && r.working && r.child.exitCode === null && r.child.signalCode === null,
    );
  }

  private scheduleKill(): void {
    const every = this.settings.killEveryMs;
    if (every === null || this.stopping) return;
    if (!this.someoneWorking()) {
      this.onWorking = () => {
        this.onWorking = undefined;
        this.scheduleKill();
      };
      return;
    }
    this.chaos = setTimeout(() => {
      const index = Math.floor(this.random() * this.settings.replicas);
      const replica = this.replicas[index];
      if (replica && replica.child.exitCode === null && replica.child.signalCode === null) {
        replica.killedByUs = true;
        replica.child.kill('SIGKILL');
        this.kills++;
        this.events.push({ at: Date.now(), replica: index, what: 'SIGKILL' });
      }
      this.scheduleKill();
    }, this.between(every));
  }

  /** Events in [from, to], for a failing trace. */
  during(from: number, to: number): FleetEvent[] {
    return this.events.filter((e) => e.at >= from && e.at <= to);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.onWorking = undefined;
    process.off('exit', this.killAll);
    clearTimeout(this.chaos);
    await Promise.all(
      this.replicas.map(async (replica) => {
        if (!replica) return;
        if (replica.child.exitCode === null && replica.child.signalCode === null)
          replica.child.kill('SIGTERM');
        await replica.exited;
      }),
    );
  }
}
