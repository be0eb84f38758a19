/**
 * Reads a deletion turn starts before its steps ask for them, so that requests which do not depend on each
 * other are in flight together instead of in series (issue 13: a released Sandbox outlived its pods by the
 * finishing turn's five requests one after another). Only reads: every write still waits for the step that
 * makes it, in the order docs/deletion.md gives.
 *
 * Why a read may start early, and when it may not:
 * - The references LIST is a confirming LIST only if it is made after the fence and after anything the turn
 *   itself deletes (the erase, the prune). The fence is the cached Sandbox's deletionTimestamp, already set
 *   when the turn starts; so the LIST starts with the incarnation GET only when no erase and no prune can come
 *   before the decision. It is taken only by the step that confirms the decision.
 * - The pods LIST is what the release acts on. It may be older than the decision: nothing creates pods for a
 *   deleting Sandbox, and whatever a turn's LIST missed, the next turn's finds.
 * - Both are found by name, as in series: the GET says whether the name still holds this incarnation, and a
 *   turn that learns it does not ends before it takes either.
 */
import type { SessionReference } from '../../api/objects.ts';
import type { Parsed } from '../../api/parse.ts';
import type { PodSummary } from '../cache/pod-summary.ts';

type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/** A read started now and taken at most once; a second take, or none started, is a fresh read. */
export class Ahead<T> {
  private settled: Promise<Settled<T>> | undefined;

  start(read: () => Promise<T>): void {
    // Kept as a value until a step takes it: a turn that ends first (stale, blocked, a walk under way) never
    // needed the answer, and its failure is then no failure of the turn.
    this.settled ??= read().then(
      (value) => ({ ok: true, value }),
      (error: unknown) => ({ ok: false, error }),
    );
  }

  /** The read started earlier, rethrowing its failure; or `read` now. */
  async take(read: () => Promise<T>): Promise<T> {
    const settled = this.settled;
    this.settled = undefined;
    if (settled === undefined) return read();
    const result = await settled;
    if (!result.ok) throw result.error;
    return result.value;
  }
}

export type TurnReads = {
  readonly references: Ahead<Parsed<SessionReference>[]>;
  readonly pods: Ahead<PodSummary[]>;
};

export const turnReads = (): TurnReads => ({ references: new Ahead(), pods: new Ahead() });
