/**
 * Report-to-parent-once through the agent host's client (operator/client), against the real API server:
 * every case docs/sidecar.md "Completion reports to the parent" lists, the key surviving a host restart, a missing join record, and more than 16
 * joined origins on the write carrying Completed (issue 12).
 */
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_VERSION, GROUP, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import type { TurnOrigin } from '../../../operator/api/session-reference.ts';
import { CompletionReports, type ReportOutcome, type ReportRequest } from '../../../operator/client/index.ts';
import { kubeConfig, testNamespace } from '../../harness/kube.ts';

const namespace = testNamespace('report-once');
const ref = { group: GROUP, version: VERSION, plural: SESSION_REFERENCE.plural };
const objects = () => kubeConfig().makeApiClient(CustomObjectsApi);
let made = 0;

/** A child reference with its latest turn written by the client, as a host would. */
async function child(turn: { id: string; origin: TurnOrigin; joinedOrigins?: TurnOrigin[] }) {
  made += 1;
  const name = `child-${made}`;
  await objects().createNamespacedCustomObject({
    ...ref,
    namespace,
    body: {
      apiVersion: API_VERSION,
      kind: SESSION_REFERENCE.kind,
      metadata: { name },
      spec: { sandbox: 'sbx-a', session: name, route: 'r', role: 'Subagent', parentSession: 'parent' },
    },
  });
  await new CompletionReports(kubeConfig()).recordTurn(namespace, name, {
    ...turn,
    phase: 'Completed',
    joinedOrigins: turn.joinedOrigins ?? [],
  });
  return name;
}

/** Calls reportOnce and counts deliveries. */
async function report(
  reports: CompletionReports,
  name: string,
  over: Partial<ReportRequest> = {},
): Promise<{ outcome: ReportOutcome; delivered: number }> {
  let delivered = 0;
  const outcome = await reports.reportOnce(
    {
      namespace,
      reference: name,
      childSession: name,
      delegationId: `op-${name}`,
      delegation: 'Answered',
      turnId: 't2',
      ...over,
    },
    () => {
      delivered += 1;
      return Promise.resolve();
    },
  );
  return { outcome, delivered };
}

describe('report to the parent once, through the client', { timeout: 120_000 }, () => {
  let reports: CompletionReports;
  beforeAll(() => {
    reports = new CompletionReports(kubeConfig());
  });

  it.each(['ShellNotice', 'WatchNotice', 'BrowserNotice', 'SubagentNotice', 'WorktreeNotice'] as const)(
    'reports nothing for a %s turn of an answered delegation',
    async (origin) => {
      const name = await child({ id: 't2', origin });
      expect(await report(reports, name)).toEqual({
        outcome: { kind: 'NotReported', reason: 'HostNoticeTurn' },
        delivered: 0,
      });
    },
  );

  it.each(['PersonMessage', 'ParentMessage', 'Unknown'] as const)(
    'reports a %s turn once, even across a host restart',
    async (origin) => {
      const name = await child({ id: 't2', origin });
      expect(await report(reports, name)).toMatchObject({
        outcome: { kind: 'Reported', report: { reason: 'Resumption' } },
        delivered: 1,
      });
      expect(await report(reports, name)).toMatchObject({
        outcome: { kind: 'AlreadyReported' },
        delivered: 0,
      });
      // A restarted host is a new client with no memory: the key lives on the reference.
      expect(await report(new CompletionReports(kubeConfig()), name)).toMatchObject({
        outcome: { kind: 'AlreadyReported' },
        delivered: 0,
      });
      // Another delegation of the same child turn is its own report.
      expect(await report(reports, name, { delegationId: 'op-other' })).toMatchObject({ delivered: 1 });
    },
  );

  it('reports on a shell-notice turn while the delegation is unanswered', async () => {
    const name = await child({ id: 't2', origin: 'ShellNotice' });
    expect(await report(reports, name, { delegation: 'Unanswered' })).toMatchObject({
      outcome: { report: { reason: 'DelegationUnanswered' } },
      delivered: 1,
    });
  });

  it('reports a turn superseded before its origin was read, and one whose reference cannot be read', async () => {
    const name = await child({ id: 't3', origin: 'ShellNotice' });
    expect(await report(reports, name)).toMatchObject({
      outcome: { report: { reason: 'TurnSuperseded' } },
      delivered: 1,
    });
    expect(await report(reports, 'no-such-reference')).toMatchObject({
      outcome: { report: { reason: 'ProjectionUnreadable' } },
      delivered: 1,
    });
  });

  it('reports once when the parent steers into a shell-notice turn; a second message and a late call add nothing', async () => {
    const name = await child({ id: 't2', origin: 'ShellNotice', joinedOrigins: ['ParentMessage'] });
    expect(await report(reports, name)).toMatchObject({
      outcome: { report: { reason: 'SteeredResumption' } },
      delivered: 1,
    });
    await reports.recordTurn(namespace, name, {
      id: 't2',
      phase: 'Completed',
      origin: 'ShellNotice',
      joinedOrigins: ['ParentMessage', 'PersonMessage'],
    });
    expect(await report(reports, name)).toMatchObject({ outcome: { kind: 'AlreadyReported' }, delivered: 0 });
  });

  it('reports a host-notice turn whose host never recorded joins (silence is the worse failure)', async () => {
    const name = await child({ id: 't2', origin: 'ShellNotice' });
    // A host that writes status.turn itself, without joinedOrigins.
    await objects().patchNamespacedCustomObjectStatus(
      {
        ...ref,
        namespace,
        name,
        body: {
          status: { turn: { id: 't2', phase: 'Completed', origin: 'ShellNotice', joinedOrigins: null } },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(await report(reports, name)).toMatchObject({
      outcome: { report: { reason: 'JoinUnrecorded' } },
      delivered: 1,
    });
  });

  it('writes Completed whatever the number of joined origins (more than 16), and keeps the ended turn', async () => {
    const name = await child({ id: 't1', origin: 'ParentMessage' });
    const many: TurnOrigin[] = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? 'PersonMessage' : 'WatchNotice',
    );
    await reports.recordTurn(namespace, name, {
      id: 't2',
      phase: 'Completed',
      origin: 'ShellNotice',
      joinedOrigins: many,
    });
    const stored = (await objects().getNamespacedCustomObject({ ...ref, namespace, name })) as {
      status: { turn: { phase: string; joinedOrigins: string[] }; endedTurns: { id: string }[] };
    };
    expect(stored.status.turn).toMatchObject({
      phase: 'Completed',
      joinedOrigins: ['PersonMessage', 'WatchNotice'],
    });
    expect(stored.status.endedTurns.map((t) => t.id)).toEqual(['t1', 't2']);
  });
});
