/** Builds a ShellReaper over the fake world, journal and clock, with helpers in domain words. */
import { pino } from 'pino';
import type { JournalEntry } from '../../../../operator/sidecar/process/ledger/journal-entries.ts';
import { createNoticeOutbox } from '../../../../operator/sidecar/process/notices/notice-outbox.ts';
import type { OutputTail } from '../../../../operator/sidecar/process/os/output-tail.ts';
import type { ReaperOptions } from '../../../../operator/sidecar/process/reaper-outcomes.ts';
import { ShellReaper } from '../../../../operator/sidecar/process/reaper.ts';
import type { RegisterShellRequest } from '../../../../operator/sidecar/contract/requests.ts';
import { FakeJournal } from './fake-journal.ts';
import { FakeClock, FakeWorld, type FakeProcess, type SpawnOptions } from './fake-world.ts';
import type {
  RetireFailure,
  RetireReport,
  RetireReporter,
} from '../../../../operator/sidecar/process/kube/ports.ts';

export const OPTIONS: ReaperOptions = {
  graceMs: 5_000,
  killTimeoutMs: 2_000,
  noticeHoldMs: 1_000,
  pollMs: 0,
};

export class RecordingReporter implements RetireReporter {
  readonly retired: RetireReport[] = [];
  readonly failures: RetireFailure[] = [];
  fail = false;
  reportRetired(report: RetireReport): Promise<void> {
    this.retired.push(report);
    return this.fail ? Promise.reject(new Error('apiserver down')) : Promise.resolve();
  }
  reportFailure(failure: RetireFailure): Promise<void> {
    this.failures.push(failure);
    return Promise.resolve();
  }
}

export interface Harness {
  readonly world: FakeWorld;
  readonly clock: FakeClock;
  readonly journal: FakeJournal<JournalEntry>;
  readonly reporter: RecordingReporter;
  readonly reaper: ShellReaper;
  readonly outbox: ReturnType<typeof createNoticeOutbox>;
}

export async function startHarness(
  over: { world?: FakeWorld; clock?: FakeClock; journal?: FakeJournal<JournalEntry>; tail?: OutputTail } = {},
): Promise<Harness> {
  const world = over.world ?? new FakeWorld();
  const clock = over.clock ?? new FakeClock();
  const journal = over.journal ?? new FakeJournal<JournalEntry>();
  const reporter = new RecordingReporter();
  const logger = pino({ level: 'silent' });
  const outbox = createNoticeOutbox(journal, clock, logger);
  const reaper = new ShellReaper({
    table: world,
    signaller: world,
    journal,
    outbox,
    clock,
    reporter,
    logger,
    options: OPTIONS,
    ...(over.tail === undefined ? {} : { tail: over.tail }),
  });
  await reaper.start();
  return { world, clock, journal, reporter, reaper, outbox };
}

export interface FakeShell {
  readonly leader: FakeProcess;
  readonly request: RegisterShellRequest;
}

/** A detached `bash -c` the host spawned for (session, turn), carrying the marker. */
export function spawnShell(
  world: FakeWorld,
  session: string,
  turn: string,
  shell: string,
  options: SpawnOptions = {},
): FakeShell {
  const leader = world.spawn({ marker: { session, turn, shell }, ...options });
  return {
    leader,
    request: {
      session,
      turn,
      shell,
      pgid: leader.pid,
      leaderPid: leader.pid,
      leaderStartTime: leader.startTime,
    },
  };
}

/** A child the shell forked: same group and session, inherited marker. */
export function forkMember(world: FakeWorld, parent: FakeProcess, options: SpawnOptions = {}): FakeProcess {
  const marker = parent.environ === 'unreadable' ? 'unreadable' : parent.environ;
  return world.spawn({
    ppid: parent.pid,
    pgrp: parent.pgrp,
    session: parent.session,
    ...(marker === undefined ? {} : { marker }),
    ...options,
  });
}

export const completed = (session: string, turn: string) =>
  ({ session, turn, phase: 'Completed', role: 'Subagent' }) as const;

export const signalsTo = (world: FakeWorld, target: number) =>
  world.sent.filter((s) => s.target === target).map((s) => `${s.kind}:${s.signal}:${s.outcome}`);

/** An OutputTail fed by the test: lines appear when the test writes them. */
export class FakeTail implements OutputTail {
  readonly pending = new Map<string, string[]>();
  readonly forgotten: string[] = [];
  write(shell: string, ...lines: string[]): void {
    this.pending.set(shell, [...(this.pending.get(shell) ?? []), ...lines]);
  }
  nextLines(shell: string): Promise<readonly string[]> {
    const lines = this.pending.get(shell) ?? [];
    this.pending.delete(shell);
    return Promise.resolve(lines);
  }
  bound(_shell: string): Promise<void> {
    return Promise.resolve();
  }
  forget(shell: string): Promise<void> {
    this.forgotten.push(shell);
    return Promise.resolve();
  }
}
