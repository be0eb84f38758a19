/**
 * The legacy walks' own lane (docs/deletion.md#the-legacy-walk, ADR 0005). A walk takes up to its budget
 * (20 s), so no reconcile turn waits for one: a turn that needs a walk starts it here and ends. The walk runs
 * beside the workers, at most `lanes` at a time and one per sandbox (a new incarnation's replaces an old
 * one's); its outcome is kept in memory for the incarnation (uid) and the sandbox's key is enqueued again.
 * The next turn takes the outcome and its own status write persists it: the lane never writes. A crash loses
 * a kept outcome, and the next operator walks again; the marker exists only once a status write carried it.
 */
import type { Logger } from 'pino';
import type { SandboxState } from '../../api/objects.ts';
import { earnsMarker, type ReconciliationOutcome } from '../../api/reconciliation-outcome.ts';
import { keyOf } from '../cache/store.ts';
import type { FinishedWalk, LegacyWalk, LegacyWalks, WalkState } from '../ports.ts';

export type WalkLaneOptions = {
  /** How many walks run at once. */
  readonly lanes: number;
  readonly now: () => Date;
  /** The sandbox's next turn takes the outcome: the runtime queue's add. */
  readonly enqueue: (key: string) => void;
  readonly onOutcome?: (kind: ReconciliationOutcome['kind']) => void;
};

type Entry = { readonly uid: string } & (
  { readonly state: 'queued' | 'walking' } | { readonly state: 'finished'; readonly walk: FinishedWalk }
);

/**
 * Two walks at once. A walk is I/O: up to `--reconcile-concurrency` calls to the ledger and locator for its
 * budget, and no worker waits for it, so more lanes would only multiply the load on the legacy services (8
 * lanes × 8 calls); one would let a slow walk hold every other sandbox's back by up to 20 s.
 */
export const WALK_LANES = 2;

const NO_STATS = { owners: 0, lookedUp: 0, skippedLegacy: 0, timedOut: 0, failed: 0, elapsedMs: 0 };

export class WalkLane implements LegacyWalks {
  /** One entry per sandbox key, for the incarnation that started it. */
  private readonly entries = new Map<string, Entry>();
  private readonly waiting: (() => Promise<void>)[] = [];
  private walking = 0;

  constructor(
    private readonly walk: LegacyWalk,
    private readonly options: WalkLaneOptions,
  ) {}

  state(sandbox: SandboxState): WalkState {
    const entry = this.entries.get(keyOfSandbox(sandbox));
    if (entry?.uid !== uidOf(sandbox)) return { kind: 'none' };
    return entry.state === 'finished' ? { kind: 'finished', ...entry.walk } : { kind: 'under-way' };
  }

  start(sandbox: SandboxState, log: Logger, onKept?: () => void): void {
    const key = keyOfSandbox(sandbox);
    const uid = uidOf(sandbox);
    const existing = this.entries.get(key);
    if (existing?.uid === uid && existing.state !== 'finished') return;
    const entry: Entry = { uid, state: 'queued' };
    this.entries.set(key, entry);
    log.info({ walking: this.walking, waiting: this.waiting.length }, 'legacy walk started in its lane');
    this.waiting.push(() => this.run(key, entry, sandbox, log, onKept));
    this.pump();
  }

  settle(sandbox: SandboxState): void {
    const key = keyOfSandbox(sandbox);
    if (this.entries.get(key)?.uid === uidOf(sandbox)) this.entries.delete(key);
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  private pump(): void {
    while (this.walking < this.options.lanes) {
      const next = this.waiting.shift();
      if (!next) return;
      this.walking += 1;
      void next().finally(() => {
        this.walking -= 1;
        this.pump();
      });
    }
  }

  private async run(
    key: string,
    entry: Entry,
    sandbox: SandboxState,
    log: Logger,
    onKept: (() => void) | undefined,
  ): Promise<void> {
    // Forgotten or replaced while it waited for a lane: nobody would take its outcome.
    if (this.entries.get(key) !== entry) return;
    this.entries.set(key, { uid: entry.uid, state: 'walking' });
    let outcome: ReconciliationOutcome;
    try {
      outcome = await this.walk.run(sandbox, log);
    } catch (error) {
      log.error({ err: error }, 'legacy walk failed; its outcome is Unavailable (fails closed)');
      const reason = `legacy walk failed: ${error instanceof Error ? error.message : String(error)}`;
      outcome = { kind: 'Unavailable', owner: undefined, reason, stats: NO_STATS };
    }
    this.options.onOutcome?.(outcome.kind);
    if (this.entries.get(key)?.uid !== entry.uid) {
      log.info({ outcome: outcome.kind }, 'legacy walk finished for a sandbox no longer cached; dropped');
      return;
    }
    this.entries.set(key, {
      uid: entry.uid,
      state: 'finished',
      walk: { outcome, finishedAt: this.options.now() },
    });
    log.info(
      {
        outcome: outcome.kind,
        earnsMarker: earnsMarker(outcome),
        reason: outcome.kind === 'Complete' ? undefined : outcome.reason,
        stats: outcome.stats,
      },
      'legacy walk finished; its outcome is kept for the sandbox’s next turn',
    );
    onKept?.();
    this.options.enqueue(key);
  }
}

const keyOfSandbox = (sandbox: SandboxState) => keyOf(sandbox.metadata.namespace, sandbox.metadata.name);
const uidOf = (sandbox: SandboxState) => sandbox.metadata.uid ?? '';
