/**
 * Report a subagent's completion to its parent once (docs/sidecar.md "Completion reports to the parent"), as one call for the agent host:
 *
 * - `recordTurn` writes the child's `status.turn` and appends an ended turn to `status.endedTurns` (the
 *   shell reaper reads both). Joined origins are kept as the distinct set, so no number of steered
 *   messages can make the write carrying `Completed` exceed the schema's 16 and fail.
 * - `reportOnce` reads what the rule needs from the child's SessionReference, decides with
 *   `decideCompletionReport`, and spends the report's key durably on the reference (an annotation per
 *   delegation), so a host restart does not report the same (delegation, turn) again. It delivers first
 *   and records the key after: a crash between the two delivers again with the same key (a duplicate the
 *   parent can drop by key), never silence. An unreadable reference reports (the rule fails open).
 */
import { createHash } from 'node:crypto';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, SESSION_REFERENCE, VERSION } from '../api/names.ts';
import { parseSessionReference } from '../api/parse.ts';
import {
  ENDED_TURNS_MAX,
  type SessionReferenceStatus,
  type TurnOrigin,
  type TurnPhase,
} from '../api/session-reference.ts';
import { KubeRequestError, request } from '../kube/errors.ts';
import { JSON_PATCH, MERGE_PATCH } from '../kube/clients.ts';
import { decideCompletionReport, type CompletionReport } from './report-rule.ts';

/** Annotations holding the last reported turn of each delegation; the name is a hash of the delegation. */
export const REPORTED_ANNOTATION_PREFIX = `report.${GROUP}/`;

export interface TurnRecord {
  readonly id: string;
  readonly phase: TurnPhase;
  readonly origin: TurnOrigin;
  /** Origins of messages steered into the turn, in any number: stored as their distinct set. */
  readonly joinedOrigins: readonly TurnOrigin[];
}

export interface ReportRequest {
  readonly namespace: string;
  /** The child's SessionReference. */
  readonly reference: string;
  readonly childSession: string;
  /** The parent's delegation this turn answers. */
  readonly delegationId: string;
  readonly delegation: 'Answered' | 'Unanswered';
  readonly turnId: string;
}

export type ReportOutcome =
  | { readonly kind: 'Reported'; readonly report: Extract<CompletionReport, { report: true }> }
  | { readonly kind: 'AlreadyReported'; readonly key: string }
  | { readonly kind: 'NotReported'; readonly reason: 'HostNoticeTurn' };

type Stored = {
  metadata?: { resourceVersion?: string; annotations?: Record<string, string> };
  status?: unknown;
};

const WRITE_ATTEMPTS = 5;

export const reportedAnnotation = (delegationId: string): string =>
  REPORTED_ANNOTATION_PREFIX + createHash('sha256').update(delegationId).digest('hex').slice(0, 40);

export class CompletionReports {
  private readonly api: CustomObjectsApi;
  constructor(config: KubeConfig) {
    this.api = config.makeApiClient(CustomObjectsApi);
  }

  private at(namespace: string, name: string) {
    return { group: GROUP, version: VERSION, namespace, plural: SESSION_REFERENCE.plural, name };
  }

  private async read(namespace: string, name: string): Promise<Stored> {
    return (await request('Get', `sessionreference ${namespace}/${name}`, () =>
      this.api.getNamespacedCustomObject(this.at(namespace, name)),
    )) as Stored;
  }

  /** Writes status.turn (and, for an ended turn, status.endedTurns), preconditioned on what it read. */
  async recordTurn(namespace: string, reference: string, turn: TurnRecord): Promise<void> {
    const target = `sessionreference ${namespace}/${reference}`;
    for (let attempt = 1; ; attempt += 1) {
      const stored = await this.read(namespace, reference);
      const parsed = parseSessionReference(stored);
      const status: SessionReferenceStatus | undefined = parsed.ok ? parsed.value.status : undefined;
      const joinedOrigins = [...new Set(turn.joinedOrigins)];
      const ended = (status?.endedTurns ?? []).filter((t) => t.id !== turn.id);
      const endedTurns =
        turn.phase === 'Running'
          ? status?.endedTurns
          : [...ended, { id: turn.id, phase: turn.phase }].slice(-ENDED_TURNS_MAX);
      const body = {
        metadata: { resourceVersion: stored.metadata?.resourceVersion },
        status: {
          turn: { ...turn, joinedOrigins, updatedAt: new Date().toISOString() },
          ...(endedTurns === undefined ? {} : { endedTurns }),
        },
      };
      try {
        await request('PatchStatus', target, () =>
          this.api.patchNamespacedCustomObjectStatus({ ...this.at(namespace, reference), body }, MERGE_PATCH),
        );
        return;
      } catch (error) {
        if (!(error instanceof KubeRequestError && error.status === 409) || attempt >= WRITE_ATTEMPTS)
          throw error;
      }
    }
  }

  /** Decides, delivers at most once per (delegation, turn), then records the key. See the module doc. */
  async reportOnce(
    req: ReportRequest,
    deliver: (report: ReportOutcome & { kind: 'Reported' }) => Promise<void>,
  ): Promise<ReportOutcome> {
    const annotation = reportedAnnotation(req.delegationId);
    let stored: Stored | undefined;
    try {
      stored = await this.read(req.namespace, req.reference);
    } catch {
      // Unreadable: the rule fails open; the key cannot be checked, so this may be a duplicate.
      stored = undefined;
    }
    const parsed = stored === undefined ? undefined : parseSessionReference(stored);
    const latest = parsed?.ok === true ? parsed.value.status?.turn : undefined;
    const decision = decideCompletionReport({
      childSession: req.childSession,
      delegationId: req.delegationId,
      delegation: req.delegation,
      turn: {
        id: req.turnId,
        ...(latest?.id === req.turnId ? { origin: latest.origin } : {}),
        ...(latest?.id === req.turnId && latest.joinedOrigins !== undefined
          ? { joinedOrigins: latest.joinedOrigins }
          : {}),
      },
      latestTurn:
        parsed?.ok === true && latest !== undefined
          ? { kind: 'Read', id: latest.id }
          : { kind: 'Unreadable' },
    });
    if (!decision.report) return { kind: 'NotReported', reason: decision.reason };
    if (stored?.metadata?.annotations?.[annotation] === req.turnId)
      return { kind: 'AlreadyReported', key: decision.key };
    const outcome = { kind: 'Reported' as const, report: decision };
    await deliver(outcome);
    if (stored !== undefined) await this.spend(req, annotation, stored);
    return outcome;
  }

  /** Records the spent key, preconditioned on the version read; a racing spender's key wins harmlessly. */
  private async spend(req: ReportRequest, annotation: string, stored: Stored, attempt = 1): Promise<void> {
    const path = `/metadata/annotations/${annotation.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    const patch = [
      { op: 'test', path: '/metadata/resourceVersion', value: stored.metadata?.resourceVersion },
      ...(stored.metadata?.annotations === undefined
        ? [{ op: 'add', path: '/metadata/annotations', value: {} }]
        : []),
      { op: 'add', path, value: req.turnId },
    ];
    try {
      await request('Patch', `sessionreference ${req.namespace}/${req.reference}`, () =>
        this.api.patchNamespacedCustomObject(
          { ...this.at(req.namespace, req.reference), body: patch },
          JSON_PATCH,
        ),
      );
    } catch (error) {
      // Someone wrote the reference since: spend again on fresh state, once.
      const conflict = error instanceof KubeRequestError && (error.status === 409 || error.status === 422);
      if (!conflict || attempt >= WRITE_ATTEMPTS) throw error;
      const fresh = await this.read(req.namespace, req.reference);
      if (fresh.metadata?.annotations?.[annotation] === req.turnId) return;
      await this.spend(req, annotation, fresh, attempt + 1);
    }
  }
}
