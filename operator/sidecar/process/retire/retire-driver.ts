/**
 * Drives one turn's retire to the end: survey /proc, `step` each target, journal the new state, then
 * perform its effects (drop notices, signal after re-proving a witness). Polls with a short backoff, so a
 * group that dies on SIGTERM is seen empty within tens of milliseconds. A restart calls it again for every
 * unfinished retire, and it re-issues the signals of the state each target was journaled in.
 *
 * It says what happened instead of calling the reaper back: it yields `TargetsEnded` each time every target
 * has ended and a fresh sweep found no new escapee, and the reaper finishes the retire under its lock; if a
 * registration joined the retire meanwhile, the reaper iterates on and the driver goes on with it. It
 * returns once the retire is finished, unknown, or shutdown began (`stop`).
 */
import type { Logger } from 'pino';
import type { JournalEntry } from '../ledger/journal-entries.ts';
import type { Clock, ProcessTable, Signaller } from '../os/ports.ts';
import {
  entryEffects,
  nextDeadline,
  startProgress,
  step,
  targetId,
  type Observation,
  type RetireEffect,
  type RetireEvent,
  type RetireLimits,
} from './retire-plan.ts';
import type { LedgerRecorder } from '../ledger/ledger-recorder.ts';
import { applyEntry, type Ledger, type TurnRetire } from '../ledger/shell-ledger.ts';
import { protectLedgerHosts } from './host-protection.ts';
import {
  indexSnapshot,
  proveWitness,
  surveyEscapee,
  surveyGroup,
  sweepEscapees,
  type Snapshot,
} from './survey.ts';
import { shellMarker } from '../ledger/shell-group.ts';
import type { NoticeOutbox } from '../notices/notice-outbox.ts';
import { isTerminal, type TargetProgress } from '../ledger/retire-targets.ts';

const POLL_MIN_MS = 10;
const POLL_MAX_MS = 250;
/** Escapee sweeps after every target ended; escapees that keep forking new ones are logged beyond it. */
const FINAL_SWEEPS_MAX = 5;

export interface RetireContext {
  readonly table: ProcessTable;
  readonly signaller: Signaller;
  readonly outbox: NoticeOutbox;
  readonly clock: Clock;
  readonly limits: RetireLimits;
  readonly logger: Logger;
  readonly ledger: Ledger;
  /** The ledger's writer (ledger/ledger-recorder.ts): applies an entry, then journals it durably. */
  readonly record: LedgerRecorder;
  /** Aborted once shutdown began: the driver leaves the retire to the journal, which resumes it at the next start. */
  readonly stop: AbortSignal;
}

/** Every target has ended and a fresh sweep found no new escapee: the retire may be finished. */
export interface TargetsEnded {
  readonly kind: 'TargetsEnded';
}

const ownerOf = (p: TargetProgress) =>
  p.target.kind === 'Group' ? shellMarker(p.target.group) : p.target.escapee.marker;

const pending = (retire: TurnRetire): TargetProgress[] =>
  [...retire.targets.values()].filter((p) => !isTerminal(p.state));

async function survey(ctx: RetireContext, snapshot: Snapshot, p: TargetProgress): Promise<Observation> {
  const protectedPids = ctx.signaller.protectedPids();
  return p.target.kind === 'Group'
    ? surveyGroup(ctx.table, snapshot, p.target.group, new Set(p.known), protectedPids)
    : surveyEscapee(ctx.table, snapshot, p.target.escapee, protectedPids);
}

async function advance(ctx: RetireContext, log: Logger, key: string, p: TargetProgress, event: RetireEvent) {
  const { progress, effects } = step(p, event, ctx.clock.now(), ctx.limits);
  const entry: JournalEntry = { type: 'TargetUpdated', key, progress };
  if (progress.state.kind !== p.state.kind || progress.known.length !== p.known.length) {
    // Journal before acting: a restart must know a signal may have gone out.
    await ctx.record(entry);
    log.info(
      { target: p.id, from: p.state.kind, to: progress.state, event: event.kind },
      'retire target advanced',
    );
  } else {
    applyEntry(ctx.ledger, entry);
  }
  await perform(ctx, log, key, progress, effects);
}

async function perform(
  ctx: RetireContext,
  log: Logger,
  key: string,
  p: TargetProgress,
  effects: readonly RetireEffect[],
) {
  for (const effect of effects) {
    if (effect.kind === 'DropNotices') {
      const dropped = await ctx.outbox.dropShells([effect.shell]);
      log.info({ target: p.id, dropped }, 'dropped the shell’s pending notices before any signal');
      continue;
    }
    const witness = await proveWitness(ctx.table, effect.scope, effect.witnesses, ownerOf(p));
    if (witness === undefined) {
      log.info(
        { target: p.id, signal: effect.signal },
        'no witness is alive in scope: signal skipped, the next survey decides',
      );
      if (effect.signal === 'SIGTERM') await advance(ctx, log, key, p, { kind: 'Signalled' });
      continue;
    }
    const outcome =
      effect.scope.kind === 'Group'
        ? ctx.signaller.signalGroup(effect.scope.pgid, effect.signal)
        : ctx.signaller.signalProcess(effect.scope.pid, effect.signal);
    log.info(
      { target: p.id, signal: effect.signal, scope: effect.scope, witness, outcome },
      'signal sent after identity was re-proven',
    );
    switch (outcome.kind) {
      case 'Delivered':
        if (effect.signal === 'SIGTERM') await advance(ctx, log, key, p, { kind: 'Signalled' });
        break;
      case 'Gone':
        break;
      case 'Refused':
        await advance(ctx, log, key, p, {
          kind: 'SignalRefused',
          signal: effect.signal,
          detail: outcome.code,
        });
        break;
      case 'Forbidden':
        await advance(ctx, log, key, p, {
          kind: 'SignalRefused',
          signal: effect.signal,
          detail: outcome.reason,
        });
        break;
    }
  }
}

/** Adds marked processes of the retired turns outside the retired groups; returns how many were new. */
async function addEscapees(
  ctx: RetireContext,
  log: Logger,
  retire: TurnRetire,
  snapshot: Snapshot,
): Promise<number> {
  const groups = [...retire.targets.values()].flatMap((p) =>
    p.target.kind === 'Group' ? [p.target.group] : [],
  );
  const groupIds = new Set(groups.map((g) => g.pgid));
  const notBefore = groups.length === 0 ? 0 : Math.min(...groups.map((g) => g.leaderStartTime));
  const scope = { session: retire.session, turns: new Set(retire.turns) };
  const found = await sweepEscapees(
    ctx.table,
    snapshot,
    scope,
    groupIds,
    notBefore,
    ctx.signaller.protectedPids(),
  );
  let added = 0;
  for (const escapee of found) {
    const target = { kind: 'Escapee' as const, escapee };
    if (retire.targets.has(targetId(target))) continue;
    await ctx.record({ type: 'TargetUpdated', key: retire.key, progress: startProgress(target) });
    log.info({ escapee }, 'found an escapee by its marker outside the retired groups');
    added += 1;
  }
  return added;
}

export async function* driveRetire(ctx: RetireContext, key: string): AsyncGenerator<TargetsEnded, void> {
  const log = ctx.logger.child({ retire: key });
  const retire = ctx.ledger.retires.get(key);
  if (retire === undefined || retire.finished !== undefined) return;
  for (const p of pending(retire)) {
    if (p.state.kind === 'Fenced') continue;
    log.info({ target: p.id, state: p.state.kind }, 'resuming a retire the journal left unfinished');
    await perform(ctx, log, key, p, entryEffects(p));
  }
  let pause = POLL_MIN_MS;
  let swept = false;
  let finalSweeps = 0;
  for (;;) {
    if (ctx.stop.aborted) {
      log.info('shutting down: the retire is left to the journal and resumes at the next start');
      return;
    }
    // A host that exited, or whose pid was recycled, is released before the scan.
    await protectLedgerHosts(ctx.table, ctx.signaller, ctx.ledger);
    const snapshot = indexSnapshot(await ctx.table.scan());
    if (!swept) {
      // The first sweep shares the first scan, so escapees get SIGTERM together with their groups.
      await addEscapees(ctx, log, retire, snapshot);
      swept = true;
    }
    for (const p of pending(retire)) {
      if (p.state.kind === 'Fenced') await advance(ctx, log, key, p, { kind: 'Started' });
    }
    for (const p of pending(retire)) {
      const current = retire.targets.get(p.id) ?? p;
      await advance(ctx, log, key, current, {
        kind: 'Surveyed',
        observation: await survey(ctx, snapshot, current),
      });
    }
    if (pending(retire).length === 0) {
      // A fresh scan: an escapee forked while its group was dying must not slip between two scans.
      const fresh = indexSnapshot(await ctx.table.scan());
      const added = finalSweeps < FINAL_SWEEPS_MAX ? await addEscapees(ctx, log, retire, fresh) : 0;
      finalSweeps += 1;
      // The reaper finishes the retire here; when it cannot (a registration joined), it resumes the driver.
      if (added === 0) yield { kind: 'TargetsEnded' };
      pause = POLL_MIN_MS;
      continue;
    }
    const deadlines = pending(retire).flatMap((p) => nextDeadline(p, ctx.limits) ?? []);
    const untilDeadline = deadlines.length === 0 ? pause : Math.min(...deadlines) - ctx.clock.now();
    await ctx.clock.sleep(Math.max(1, Math.min(pause, untilDeadline)));
    pause = Math.min(pause * 2, POLL_MAX_MS);
  }
}
