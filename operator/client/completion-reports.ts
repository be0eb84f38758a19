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
 *
 * The decisions are report-facts.ts's; this file only reads and writes.
 */
import { PatchStrategy, type KubeConfig } from '@kubernetes/client-node';
import { KubeRequestError, request } from '../kube/errors.ts';
import { jsonClientFor } from '../kube/clients.ts';
import { CLIENT_USER_AGENT, type ClientOptions } from './options.ts';
import type { JsonClient } from '../kube/plain-json.ts';
import { referencePath } from './paths.ts';
import { reportedAnnotation } from './names.ts';
import {
  decideReport,
  turnStatusPatch,
  type ReportOutcome,
  type ReportRequest,
  type TurnRecord,
} from './report-facts.ts';

export { REPORTED_ANNOTATION_PREFIX, reportedAnnotation } from './names.ts';
export type { ReportOutcome, ReportRequest, TurnRecord } from './report-facts.ts';

type Stored = { metadata?: { resourceVersion?: string; annotations?: Record<string, string> } };

const WRITE_ATTEMPTS = 5;

export class CompletionReports {
  private readonly json: JsonClient;
  constructor(config: KubeConfig, options: ClientOptions = {}) {
    this.json = jsonClientFor(config, { userAgent: options.userAgent ?? CLIENT_USER_AGENT });
  }

  private async read(namespace: string, name: string): Promise<Stored> {
    return (await request('Get', `sessionreference ${namespace}/${name}`, () =>
      this.json({ method: 'GET', path: referencePath(namespace, name) }),
    )) as Stored;
  }

  /** Writes status.turn (and, for an ended turn, status.endedTurns), preconditioned on what it read. */
  async recordTurn(namespace: string, reference: string, turn: TurnRecord): Promise<void> {
    const target = `sessionreference ${namespace}/${reference}`;
    for (let attempt = 1; ; attempt += 1) {
      const stored = await this.read(namespace, reference);
      const body = turnStatusPatch(stored, turn, new Date().toISOString());
      try {
        await request('PatchStatus', target, () =>
          this.json({
            method: 'PATCH',
            path: `${referencePath(namespace, reference)}/status`,
            body,
            contentType: PatchStrategy.MergePatch,
          }),
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
    let stored: Stored | undefined;
    try {
      stored = await this.read(req.namespace, req.reference);
    } catch {
      // Unreadable: the rule fails open; the key cannot be checked, so this may be a duplicate.
      stored = undefined;
    }
    const decision = decideReport(req, stored);
    if (decision.kind !== 'Deliver') return decision;
    const outcome = { kind: 'Reported' as const, report: decision.report };
    await deliver(outcome);
    if (stored !== undefined) await this.spend(req, reportedAnnotation(req.delegationId), stored);
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
        this.json({
          method: 'PATCH',
          path: referencePath(req.namespace, req.reference),
          body: patch,
          contentType: PatchStrategy.JsonPatch,
        }),
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
