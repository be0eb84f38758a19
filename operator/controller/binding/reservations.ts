/**
 * The pool sandboxes this process's binding turns hold between choosing one and their patch's answer. A claim's
 * turns run one at a time, but the workers bind different claims at once, and in a burst two would meet on the
 * same candidate: the loser pays a reference created and withdrawn. A reserved candidate is skipped by the
 * other turns of this process. Across replicas, or against a stale cache, the binding patch's tests still
 * decide which claim wins; this only spares the races inside one process.
 */
export class Reservations {
  private readonly held = new Map<string, Set<string>>();

  /** Reserves `name` in `namespace`; the returned function releases it (call it once the patch answered). */
  reserve(namespace: string, name: string): () => void {
    const names = this.held.get(namespace) ?? new Set<string>();
    names.add(name);
    this.held.set(namespace, names);
    return () => {
      names.delete(name);
      if (names.size === 0 && this.held.get(namespace) === names) this.held.delete(namespace);
    };
  }

  reserved(namespace: string): ReadonlySet<string> {
    return this.held.get(namespace) ?? new Set();
  }
}

/** The names a turn must not choose: the ones it tried and the ones other turns of this process hold. */
export function candidatesToSkip(
  tried: ReadonlySet<string>,
  reservations: Reservations,
  namespace: string,
): ReadonlySet<string> {
  const reserved = reservations.reserved(namespace);
  return reserved.size === 0 ? tried : new Set([...tried, ...reserved]);
}
