/**
 * Gauges of the sandboxes' state, computed from the cache at each scrape: what an administrator alerts on
 * (a deletion blocked for long, an overflowed index, an adopted sandbox that never earned its marker).
 * Read from each Sandbox's conditions, which are authoritative; phase is only their summary.
 */
import { Gauge, type Registry } from 'prom-client';
import { ANNOTATIONS } from '../../api/names.ts';
import type { SandboxState } from '../../api/objects.ts';
import { SANDBOX_PHASES } from '../../api/sandbox.ts';

/** `Unknown`: no status written yet (a sandbox the controller has not reconciled). */
export const PHASE_LABELS = [...SANDBOX_PHASES, 'Unknown'] as const;

export type SandboxStates = {
  readonly byPhase: Readonly<Record<(typeof PHASE_LABELS)[number], number>>;
  readonly deletionsBlocked: number;
  /** Seconds since the oldest blocked sandbox's deletionTimestamp; 0 when none is blocked. */
  readonly oldestBlockedSeconds: number;
  readonly overflowed: number;
  readonly adoptedWithoutMarker: number;
  /** Sandboxes holding up a node drain (DisruptionBlocked True). */
  readonly drainsBlocked: number;
};

const conditionTrue = (sandbox: SandboxState, type: string) =>
  sandbox.status?.conditions?.some((c) => c.type === type && c.status === 'True') === true;

export function sandboxStates(sandboxes: Iterable<SandboxState>, now: Date): SandboxStates {
  const byPhase = Object.fromEntries(PHASE_LABELS.map((phase) => [phase, 0])) as Record<
    (typeof PHASE_LABELS)[number],
    number
  >;
  let deletionsBlocked = 0;
  let oldestBlockedSeconds = 0;
  let overflowed = 0;
  let adoptedWithoutMarker = 0;
  let drainsBlocked = 0;
  for (const sandbox of sandboxes) {
    byPhase[sandbox.status?.phase ?? 'Unknown'] += 1;
    const deleting = sandbox.metadata.deletionTimestamp;
    if (deleting !== undefined && conditionTrue(sandbox, 'DeletionBlocked')) {
      deletionsBlocked += 1;
      const waited = (now.getTime() - new Date(deleting).getTime()) / 1000;
      oldestBlockedSeconds = Math.max(oldestBlockedSeconds, waited);
    }
    if (conditionTrue(sandbox, 'CapacityExceeded')) overflowed += 1;
    if (conditionTrue(sandbox, 'DisruptionBlocked')) drainsBlocked += 1;
    const adopted = sandbox.metadata.annotations?.[ANNOTATIONS.adoptedFrom] !== undefined;
    if (adopted && sandbox.status?.reconciliation?.marker !== true) adoptedWithoutMarker += 1;
  }
  return { byPhase, deletionsBlocked, oldestBlockedSeconds, overflowed, adoptedWithoutMarker, drainsBlocked };
}

/** Registers the state gauges; `read` lists the cached sandboxes that parsed. */
export function registerStateGauges(
  registry: Registry,
  read: () => Iterable<SandboxState>,
  now: () => Date = () => new Date(),
): void {
  // Each gauge walks the cache itself: a few passes over the sandboxes per scrape cost less than a shared cache.
  const states = () => sandboxStates(read(), now());
  const registers = [registry];
  new Gauge({
    name: 'sandbox_operator_sandboxes',
    help: 'Sandboxes in the cache by status.phase (Unknown: no status yet).',
    labelNames: ['phase'],
    registers,
    collect() {
      for (const [phase, count] of Object.entries(states().byPhase)) this.set({ phase }, count);
    },
  });
  const single = (name: string, help: string, value: (s: SandboxStates) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(value(states()));
      },
    });
  single(
    'sandbox_operator_deletions_blocked',
    'Sandboxes being deleted whose DeletionBlocked condition is True.',
    (s) => s.deletionsBlocked,
  );
  single(
    'sandbox_operator_oldest_blocked_deletion_seconds',
    'Seconds since the deletion of the longest-blocked sandbox was requested (0 when none is blocked).',
    (s) => s.oldestBlockedSeconds,
  );
  single(
    'sandbox_operator_overflowed_sandboxes',
    'Sandboxes whose CapacityExceeded condition is True (they fail closed until erased).',
    (s) => s.overflowed,
  );
  single(
    'sandbox_operator_adopted_without_marker',
    'Adopted sandboxes whose legacy reconciliation has not yet earned the marker.',
    (s) => s.adoptedWithoutMarker,
  );
  single(
    'sandbox_operator_drains_blocked',
    'Sandboxes whose DisruptionBlocked condition is True: a node drain waits on their eviction guard.',
    (s) => s.drainsBlocked,
  );
}
