/**
 * `kubectl sandbox why`: where a sandbox's deletion stands and what would end the wait — the operator's
 * last decision (verdict, evidence, reason, blocking references), the DeletionBlocked condition, the pods
 * still held, and recent Events. For a sandbox not being deleted, which references would block it. Pure.
 */
import { ANNOTATIONS, EXCLUSIVITY_FINALIZER } from '../../api/names.ts';
import type { Condition } from '../../api/fields.ts';
import type { Sandbox, SessionReference } from '../../api/objects.ts';
import type { Parsed } from '../../api/parse.ts';
import type { SandboxDecision, SandboxStatus, VerdictName } from '../../api/sandbox.ts';
import type { EventSummary, PodSummary } from './ports.ts';
import { identityOf, referencesView, type ReferenceRow, type SandboxIdentity } from './references-view.ts';

/** NotDeleting; Undecided (deleting, no decision yet); Blocked; Releasing (exclusive, pods going). */
export type DeletionState = 'NotDeleting' | 'Undecided' | 'Blocked' | 'Releasing';

export type DeletionView = {
  readonly sandbox: SandboxIdentity & { readonly phase: string | undefined };
  readonly state: DeletionState;
  readonly deletionRequestedAt: string | undefined;
  readonly decision: SandboxDecision | undefined;
  /** The references the decision names, as they are now; `gone` when forgotten since the decision. */
  readonly blocking: readonly (ReferenceRow | { readonly name: string; readonly gone: true })[];
  /** For a sandbox not being deleted: the references that would block its deletion now. */
  readonly wouldBlock: readonly ReferenceRow[];
  readonly condition: Condition | undefined;
  /**
   * A node drain of its pods' nodes, when one is under way: DisruptionBlocked True (the drain waits on its
   * eviction guard) or Disrupting True (the operator is moving its pods, policy Reschedule).
   */
  readonly drain: Condition | undefined;
  /** Suspended, when True: its pods are stopped (operations.md, "Suspend and resume"). */
  readonly suspended: Condition | undefined;
  readonly reconciliation: SandboxStatus['reconciliation'];
  readonly capacity: SandboxStatus['capacity'];
  readonly heldPods: readonly PodSummary[];
  readonly events: readonly EventSummary[];
  /** What ends the wait, in order. */
  readonly advice: readonly string[];
};

const RECENT_EVENTS = 10;

export function deletionView(
  sandbox: Sandbox,
  references: readonly Parsed<SessionReference>[],
  pods: readonly PodSummary[],
  events: readonly EventSummary[],
): DeletionView {
  const { metadata, status } = sandbox;
  const deleting = metadata.deletionTimestamp !== undefined;
  const decision = deleting ? status?.decision : undefined;
  const rows = referencesView(sandbox, references).rows;
  const state: DeletionState = !deleting
    ? 'NotDeleting'
    : decision === undefined
      ? 'Undecided'
      : decision.verdict === 'Exclusive'
        ? 'Releasing'
        : 'Blocked';
  const blocking = (decision?.blockingReferences ?? []).map(
    (name) => rows.find((row) => row.name === name) ?? { name, gone: true as const },
  );
  const view: Omit<DeletionView, 'advice'> = {
    sandbox: { ...identityOf(sandbox), phase: status?.phase },
    state,
    deletionRequestedAt: timestamp(metadata.deletionTimestamp),
    decision,
    blocking,
    wouldBlock: deleting ? [] : rows.filter((row) => row.foreign),
    condition: status?.conditions?.find((condition) => condition.type === 'DeletionBlocked'),
    drain: status?.conditions?.find(
      (c) => (c.type === 'DisruptionBlocked' || c.type === 'Disrupting') && c.status === 'True',
    ),
    suspended: status?.conditions?.find((c) => c.type === 'Suspended' && c.status === 'True'),
    reconciliation: status?.reconciliation,
    capacity: status?.capacity,
    heldPods: pods.filter((pod) => pod.finalizers.includes(EXCLUSIVITY_FINALIZER)),
    events: events.slice(-RECENT_EVENTS),
  };
  const drain =
    view.drain === undefined
      ? []
      : view.drain.type === 'Disrupting'
        ? [
            'A node drain is moving this sandbox (disruption policy Reschedule): its pods move to another node ' +
              'once no attached session has a turn Running, at the latest at the time said; the drain then ' +
              'finishes. Its workspace, references and decision are untouched.',
          ]
        : [
            'A node drain waits on this sandbox: its eviction guard refuses to evict its pods (their workspace ' +
              'lives in them). The drain goes on once the sandbox is deleted and released, or stops when it is ' +
              'called off (kubectl uncordon <node>).',
          ];
  const suspended = view.suspended
    ? [
        `It is suspended (${view.suspended.reason}): its pods are stopped, its references and guards kept; a ` +
          'deletion is decided as for any sandbox.',
      ]
    : [];
  return { ...view, advice: [...drain, ...suspended, ...adviceFor(view)] };
}

function timestamp(value: string | Date | undefined): string | undefined {
  return value instanceof Date ? value.toISOString() : value;
}

function adviceFor(view: Omit<DeletionView, 'advice'>): string[] {
  const { name } = view.sandbox;
  const erase = `kubectl annotate sandbox ${name} ${ANNOTATIONS.eraseReferences}=<reason>`;
  switch (view.state) {
    case 'NotDeleting': {
      const advice: string[] = [];
      if (view.capacity?.overflowed === true)
        advice.push(
          `The reference index overflowed: a deletion would be refused (fails closed) until: ${erase}`,
        );
      if (view.reconciliation?.marker === false)
        advice.push(
          `Its references predate the index (reconciliation ${view.reconciliation.state}): a deletion first ` +
            'reconciles them against the session ledger.',
        );
      advice.push(
        view.wouldBlock.length === 0
          ? 'Deleting it now would destroy it: no reference is foreign to its worktree.'
          : `Deleting it now would be blocked by ${view.wouldBlock.length} foreign reference(s) until they are ` +
              `forgotten; ${view.suspended ? 'it would stay suspended' : 'its pods would keep running'} meanwhile.`,
      );
      return advice;
    }
    case 'Undecided':
      return [
        'The operator has not decided this deletion yet. Is it running? ' +
          '(kubectl -n <operator namespace> get pods,leases)',
      ];
    case 'Releasing':
      return [
        'The deletion is exclusive: the operator is deleting the pods, then it erases the references and ' +
          'removes its finalizer.',
      ];
    case 'Blocked':
      return blockedAdvice(view.decision?.verdict, erase);
  }
}

function blockedAdvice(verdict: VerdictName | undefined, erase: string): string[] {
  switch (verdict) {
    case 'Foreign':
      return [
        'Sessions of other worktrees still reference this sandbox; nothing was stopped.',
        'The deletion finishes by itself once the blocking references are forgotten (their sessions deleted) ' +
          'or pruned with their worktree.',
      ];
    case 'Overflowed':
      return [
        'The reference index exceeded its capacity, so the sandbox fails closed: it is never destroyed by a ' +
          `deletion until an administrator erases the index: ${erase}`,
      ];
    case 'Incomplete':
    case 'Unavailable':
      return [
        'The operator could not prove that no other worktree uses this sandbox (see the reason), so it keeps it.',
        'It retries by itself: when the reason names the session ledger, check that it answers (--ledger-url); ' +
          'when it names an unreadable SessionReference, fix or delete that object.',
      ];
    case 'Exclusive':
    case undefined:
      return ['The operator keeps the sandbox until its verdict is Exclusive.'];
  }
}
