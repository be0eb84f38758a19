/**
 * A Sandbox name can live more than once in a sequence: GitOps re-creates a deleted one from Git. Each
 * incarnation has its creation, its deletion (the first DELETE the API server accepted, or the first answer
 * showing it after one answered 5xx) and whether it is
 * adopted: the first as the sequence created it, later ones as the Git manifest says.
 */
import type { TimedEvent } from './audit-log.ts';
import type { SoakModel } from './model.ts';

export type Incarnation = {
  readonly created: number;
  deleted: number | undefined;
  readonly adopted: boolean;
};

export class Incarnations {
  private readonly byName = new Map<string, Incarnation[]>();

  constructor(model: SoakModel, sorted: readonly TimedEvent[]) {
    const seen = new Set<string>();
    for (const sandbox of model.sandboxes.values())
      this.byName.set(sandbox.name, [{ created: -Infinity, deleted: undefined, adopted: sandbox.adopted }]);
    for (const e of sorted) {
      if (e.objectRef?.resource !== 'sandboxes') continue;
      const name = e.objectRef.name ?? '';
      const list = this.byName.get(name);
      const spec = model.sandboxes.get(name);
      if (!list || !spec) continue;
      const code = e.responseStatus?.code ?? 0;
      // A DELETE answered 5xx may have been stored (its client went away: a 504 "context canceled"): a later
      // answer showing the deletion proves it, from that answer on (the operator acts on it no earlier).
      const current = list.at(-1);
      if (
        current !== undefined &&
        current.deleted === undefined &&
        code >= 200 &&
        code < 300 &&
        showsDeletion(e)
      )
        current.deleted = e.completed;
      if (e.objectRef.subresource !== undefined) continue;
      if (code === 201) {
        if (seen.has(name))
          list.push({
            created: e.completed,
            deleted: undefined,
            adopted: spec.adopted && spec.manifestKeepsAdoption,
          });
        seen.add(name);
      } else if (e.verb === 'delete' && code >= 200 && code < 300) {
        if (current && current.deleted === undefined) current.deleted = e.completed;
      }
    }
  }

  at(name: string, time: number): Incarnation | undefined {
    return this.byName.get(name)?.findLast((i) => i.created <= time);
  }

  /** The incarnation living at `time` had its deletion recorded before then. */
  deleting(name: string, time: number): boolean {
    const deleted = this.at(name, time)?.deleted;
    return deleted !== undefined && deleted < time;
  }

  adopted(name: string, time: number): boolean {
    return this.at(name, time)?.adopted ?? false;
  }
}

function showsDeletion(e: TimedEvent): boolean {
  const answer = e.responseObject as
    { kind?: unknown; metadata?: { deletionTimestamp?: unknown } } | undefined;
  return answer?.kind === 'Sandbox' && typeof answer.metadata?.deletionTimestamp === 'string';
}
