/**
 * The shell reaper: registration, turn ends, and the retires they start. Every decision that reads and
 * then writes the ledger runs under one lock, so a registration and a fence cannot interleave: a shell
 * registered for a fenced turn joins that turn's retire (it is never leaked). Retires run outside the lock
 * and are resumed from the journal after a restart.
 */
import type { Logger } from 'pino';
import { messageOf } from '../contract/errors.ts';
import { protectedPidIn, type EndTurnRequest, type RegisterShellRequest } from '../contract/requests.ts';
import { protectLedgerHosts } from './retire/host-protection.ts';
import { compactJournal, journalGrown } from './ledger/journal-compaction.ts';
import { ledgerRecorder, type LedgerRecorder } from './ledger/ledger-recorder.ts';
import { driveRetire, type RetireContext } from './retire/retire-driver.ts';
import { startProgress } from './retire/retire-plan.ts';
import { createShellMonitor } from './shell-monitor.ts';
import {
  applyEntry,
  emptyLedger,
  fenceOf,
  isFinishable,
  planRetire,
  summarize,
  unshownTurns,
  type Ledger,
} from './ledger/shell-ledger.ts';
import { decideTurnEnd, KEEP_REASONS, turnKey } from './turns/turn-decision.ts';
import type { Role } from '../../api/session-reference.ts';
import { afterRetire } from './retire/after-retire.ts';
import type { EndTurnOutcome, ReaperDeps, RegisterOutcome } from './reaper-outcomes.ts';
import { verifyRegistration } from './registration.ts';

type Phase = { readonly kind: 'Created' } | { readonly kind: 'Running' } | { readonly kind: 'Stopped' };

const RETRY_MS = 2_000;

export class ShellReaper {
  readonly #deps: ReaperDeps;
  readonly #log: Logger;
  readonly #ledger: Ledger = emptyLedger();
  readonly #drivers = new Map<string, Promise<void>>();
  readonly #failed = new Set<string>();
  readonly #record: LedgerRecorder;
  /** Aborted by `stop`: running retires are left to the journal. */
  readonly #stop = new AbortController();
  #lock: Promise<unknown> = Promise.resolve();
  #phase: Phase = { kind: 'Created' };
  #monitorLoop: Promise<void> = Promise.resolve();
  #monitorStarted = false;
  readonly #monitor;

  constructor(deps: ReaperDeps) {
    this.#deps = deps;
    this.#log = deps.logger;
    this.#record = ledgerRecorder(this.#ledger, deps.journal, deps.logger);
    this.#monitor = createShellMonitor({
      ...deps,
      ledger: this.#ledger,
      holdMs: deps.options.noticeHoldMs,
      tail: deps.tail,
      record: this.#record,
      withLock: (work) => this.#withLock(work),
    });
  }

  /**
   * Replays and compacts the journal and resumes unfinished retires. The monitor starts only with
   * `startMonitor`, which the app calls after the first list of turns: a shell whose turn completed while
   * the sidecar was down must be fenced before its exit can be published (issue 12).
   */
  async start(): Promise<void> {
    const { entries, skipped } = await this.#deps.journal.replay();
    for (const entry of entries) applyEntry(this.#ledger, entry);
    this.#deps.outbox.restore(entries);
    await this.#compact();
    await this.#syncHosts();
    this.#phase = { kind: 'Running' };
    const unfinished = [...this.#ledger.retires.values()].filter((r) => r.finished === undefined);
    this.#log.info(
      { entries: entries.length, skipped, shells: this.#ledger.shells.size, unfinished: unfinished.length },
      'journal replayed; resuming unfinished retires',
    );
    for (const retire of unfinished) this.#ensureDriver(retire.key);
  }

  /** Starts the exit/match monitor loop (once; not at all when pollMs is 0). */
  startMonitor(): void {
    if (this.#phase.kind !== 'Running' || this.#monitorStarted || this.#deps.options.pollMs === 0) return;
    this.#monitorStarted = true;
    this.#monitorLoop = this.#runMonitor();
  }

  /** Stops the monitor and waits up to `deadlineMs` for running retires; the journal holds the rest. */
  async stop(deadlineMs: number): Promise<void> {
    this.#phase = { kind: 'Stopped' };
    this.#stop.abort();
    this.#deps.outbox.close();
    const drivers = Promise.all([...this.#drivers.values()]);
    await Promise.race([Promise.all([drivers, this.#monitorLoop]), this.#deps.clock.sleep(deadlineMs)]);
  }

  async register(request: RegisterShellRequest): Promise<RegisterOutcome> {
    await this.#syncHosts();
    const protectedPid = protectedPidIn(request, this.#deps.signaller.protectedPids());
    if (protectedPid !== undefined)
      return {
        kind: 'Refused',
        code: 'ProtectedProcess',
        reason: `pid ${protectedPid} is never a shell group`,
      };
    const verified = await verifyRegistration(this.#deps.table, request);
    if (!verified.ok) {
      this.#log.info(
        { shell: request.shell, reason: verified.reason },
        'registration refused: /proc does not prove it',
      );
      return { kind: 'Refused', code: 'IdentityMismatch', reason: verified.reason };
    }
    const { group } = verified;
    return this.#withLock(async () => {
      const existing = this.#ledger.shells.get(group.shell);
      if (existing !== undefined) {
        const same =
          existing.group.pgid === group.pgid && existing.group.leaderStartTime === group.leaderStartTime;
        return same
          ? { kind: 'AlreadyRegistered', shell: group.shell }
          : {
              kind: 'Refused',
              code: 'ShellConflict',
              reason: `shell ${group.shell} is registered with another group`,
            };
      }
      const at = this.#deps.clock.wallNow().toISOString();
      await this.#record({ type: 'ShellRegistered', at, group });
      await this.#syncHosts();
      const fence = fenceOf(this.#ledger, group.session, group.turn);
      if (fence === undefined) {
        this.#log.info(
          { shell: group.shell, session: group.session, turn: group.turn, pgid: group.pgid },
          'shell registered',
        );
        return { kind: 'Registered', shell: group.shell };
      }
      // The turn already ended: the shell joins its retire, never leaks.
      await this.#record({
        type: 'TargetUpdated',
        key: fence.key,
        progress: startProgress({ kind: 'Group', group }),
      });
      this.#log.info(
        { shell: group.shell, retire: fence.key },
        'registration for a fenced turn: the shell joins its retire',
      );
      this.#ensureDriver(fence.key);
      return { kind: 'Included', shell: group.shell, retire: fence.key };
    });
  }

  /** Records a turn end; a completed subagent turn fences the turn and starts its retire, without waiting for it. */
  async endTurn(request: EndTurnRequest): Promise<EndTurnOutcome> {
    const { session, turn, phase, role } = request;
    const decision = decideTurnEnd(role, phase);
    const key = turnKey(session, turn);
    return this.#withLock(async () => {
      const retire = this.#ledger.retires.get(key);
      const previous = this.#ledger.turnEnds.get(key);
      if (retire !== undefined || (previous !== undefined && decision.kind === 'Keep')) {
        this.#log.info({ retire: key, decision }, 'duplicate turn end: nothing new to do');
        return {
          kind: 'Duplicate',
          decision: previous?.decision ?? decision,
          finished: retire?.finished !== undefined,
        };
      }
      const at = this.#deps.clock.wallNow().toISOString();
      await this.#record({ type: 'TurnEnded', at, session, turn, phase, role, decision });
      if (decision.kind === 'Keep') {
        this.#log.info({ session, turn, phase, role, reason: decision.reason }, 'turn ended: shells kept');
        return { kind: 'Kept', reason: decision.reason };
      }
      const plan = planRetire(this.#ledger, session, turn);
      await this.#record({ type: 'RetireFenced', at, key, session, turn, turns: [...plan.turns] });
      for (const group of plan.groups)
        await this.#record({ type: 'TargetUpdated', key, progress: startProgress({ kind: 'Group', group }) });
      // Fence, then drop, then scan (issue 12): a held exit notice must not lapse while /proc is read.
      const dropped = await this.#deps.outbox.dropShells(plan.groups.map((g) => g.shell));
      this.#log.info(
        { retire: key, turns: plan.turns, groups: plan.groups.length, dropped },
        'completed subagent turn: fenced and its notices dropped; retiring its shells',
      );
      this.#ensureDriver(key);
      return { kind: 'Retiring', retire: key, groups: plan.groups.length };
    });
  }

  /**
   * Settles a subagent's shell-bearing turns that a full history no longer shows (turns/turn-history.ts,
   * `unshownTurns`): kept like interrupted turns (`TurnEndLost`), so the session's next completed turn
   * retires their shells. Called before that status's own turn ends, so a completed one among them does.
   */
  async settleUnshownTurns(session: string, role: Role, shown: ReadonlySet<string>): Promise<string[]> {
    if (role !== 'Subagent') return [];
    return this.#withLock(async () => {
      const lost = unshownTurns(this.#ledger, session, shown);
      const at = this.#deps.clock.wallNow().toISOString();
      const decision = { kind: 'Keep', reason: 'TurnEndLost' } as const;
      for (const turn of lost)
        await this.#record({ type: 'TurnEnded', at, session, turn, phase: 'Interrupted', role, decision });
      if (lost.length > 0) this.#log.warn({ session, turns: lost }, KEEP_REASONS.TurnEndLost);
      return lost;
    });
  }

  /** What the sidecar knows about one turn (for GET /v1/turns and tests). */
  turnStatus(session: string, turn: string) {
    const key = turnKey(session, turn);
    const retire = this.#ledger.retires.get(key);
    return {
      turnEnd: this.#ledger.turnEnds.get(key),
      retire: retire && {
        finished: retire.finished,
        targets: [...retire.targets.values()].map((p) => ({ id: p.id, state: p.state })),
      },
    };
  }

  /** Idle when no retire runs: for tests and graceful shutdown. */
  async settled(): Promise<void> {
    while (this.#drivers.size > 0) await Promise.all([...this.#drivers.values()]);
  }

  async tickMonitor(): Promise<void> {
    await this.#syncHosts();
    await this.#monitor.tick();
    await this.#compactWhenGrown();
  }

  /** Protects exactly the live, proven hosts of the shells in the ledger (retire/host-protection.ts). */
  #syncHosts(): Promise<void> {
    return protectLedgerHosts(this.#deps.table, this.#deps.signaller, this.#ledger);
  }

  #withLock<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#lock.then(work);
    this.#lock = run.catch(() => undefined);
    return run;
  }

  #compact(): Promise<void> {
    return compactJournal(this.#deps.journal, this.#ledger, this.#deps.outbox);
  }

  #compactWhenGrown(): Promise<void> {
    if (!journalGrown(this.#deps.journal)) return Promise.resolve();
    return this.#withLock(async () => {
      if (!journalGrown(this.#deps.journal)) return;
      try {
        await this.#compact();
        this.#log.info({ shells: this.#ledger.shells.size }, 'journal compacted');
      } catch (error) {
        this.#log.error({ err: error }, 'journal compaction failed; the next check retries');
      }
    });
  }

  #retireContext(): RetireContext {
    return {
      ...this.#deps,
      limits: this.#deps.options,
      ledger: this.#ledger,
      record: this.#record,
      stop: this.#stop.signal,
    };
  }

  #finish(key: string): Promise<boolean> {
    return this.#withLock(async () => {
      const retire = this.#ledger.retires.get(key);
      if (retire === undefined || !isFinishable(retire)) return false;
      const summary = summarize(retire);
      const at = this.#deps.clock.wallNow().toISOString();
      await this.#record({ type: 'RetireFinished', at, key, summary });
      await this.#syncHosts();
      const level = summary.unreachable > 0 ? 'warn' : 'info';
      this.#log[level]({ retire: key, summary }, 'retire finished');
      const shells = [...retire.targets.values()].flatMap((p) =>
        p.target.kind === 'Group' ? [p.target.group.shell] : [],
      );
      const report = { session: retire.session, turn: retire.turn, summary, finishedAt: at };
      void afterRetire({ ...this.#deps, compact: () => this.#compactWhenGrown() }, report, shells);
      return true;
    });
  }

  async #drive(key: string): Promise<void> {
    try {
      // The driver says when every target has ended; the retire finishes under the lock, unless a
      // registration joined it meanwhile: then the driver goes on with the new target.
      for await (const _ended of driveRetire(this.#retireContext(), key)) {
        if (await this.#finish(key)) return;
      }
    } catch (error) {
      this.#log.error({ err: error, retire: key }, 'retire failed; it stays journaled and is retried');
      const retire = this.#ledger.retires.get(key);
      if (retire !== undefined && !this.#failed.has(key)) {
        this.#failed.add(key);
        const failure = { session: retire.session, turn: retire.turn, message: messageOf(error) };
        try {
          await this.#deps.reporter.reportFailure(failure);
        } catch (cause) {
          this.#log.error({ err: cause, retire: key }, 'could not report the retire failure');
        }
      }
      await this.#deps.clock.sleep(RETRY_MS);
    }
  }

  #ensureDriver(key: string): void {
    if (this.#phase.kind !== 'Running' || this.#drivers.has(key)) return;
    const run = this.#drive(key).finally(() => {
      this.#drivers.delete(key);
      // A registration may have reopened the retire just after it finished.
      if (this.#ledger.retires.get(key)?.finished === undefined) this.#ensureDriver(key);
    });
    this.#drivers.set(key, run);
  }

  async #runMonitor(): Promise<void> {
    while (this.#phase.kind === 'Running') {
      try {
        await this.tickMonitor();
      } catch (error) {
        this.#log.error({ err: error }, 'shell monitor tick failed; notices wait for the next tick');
      }
      await this.#deps.clock.sleep(this.#deps.options.pollMs);
    }
  }
}
