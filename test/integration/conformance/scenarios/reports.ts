/** recordTurn and reportOnce: the parent hears once per (delegation, turn), across host restarts and crashes. */
import { expect } from 'vitest';
import { sessionReferenceName } from '../../../../operator/client/names.ts';
import { createSandbox, getReference } from '../../controller/fixtures.ts';
import type { Context, Scenario } from '../context.ts';

type Reported = { outcome: { kind: string; reason?: string; key?: string }; delivered: { key: string }[] };

async function child(context: Context, base: string) {
  const { namespace } = context;
  const sandbox = context.name(base);
  await createSandbox(namespace, sandbox, { worktree: 'wt-1' });
  const host = context.host();
  const reference = await host.ok<string>('attach', {
    namespace,
    sandbox,
    session: 'workspace_child',
    worktree: 'wt-1',
    route: 'r/child',
    role: 'Subagent',
    parentSession: 'workspace_parent',
  });
  expect(reference).toBe(sessionReferenceName(sandbox, 'workspace_child'));
  const request = (turnId: string, deliver: 'record' | 'fail' | 'crash') => ({
    namespace,
    reference,
    childSession: 'workspace_child',
    delegationId: `op-${context.client.short}`,
    delegation: 'Answered',
    turnId,
    deliver,
  });
  const record = (id: string, origin: string, joinedOrigins: string[] = []) =>
    host.ok('recordTurn', { namespace, reference, turn: { id, phase: 'Completed', origin, joinedOrigins } });
  return { namespace, host, reference, request, record };
}

export const reports: readonly Scenario[] = [
  {
    name: 'a completion is reported once across a host restart; a host-notice turn is not reported',
    async run(context) {
      const { namespace, host, reference, request, record } = await child(context, 'report-restart');
      await record('t1', 'ParentMessage', ['ShellNotice', 'ShellNotice']);
      const stored = await getReference(namespace, reference);
      expect(stored?.status?.turn).toMatchObject({
        id: 't1',
        phase: 'Completed',
        joinedOrigins: ['ShellNotice'],
      });
      expect(stored?.status?.endedTurns).toEqual([{ id: 't1', phase: 'Completed' }]);

      const first = await host.ok<Reported>('reportOnce', request('t1', 'record'));
      expect(first.outcome).toEqual({
        kind: 'Reported',
        reason: 'Resumption',
        key: `resume:op-${context.client.short}:t1:answer`,
      });
      expect(first.delivered).toHaveLength(1);
      await host.stop();
      const restarted = context.host();
      const again = await restarted.ok<Reported>('reportOnce', request('t1', 'record'));
      expect(again).toEqual({ outcome: { kind: 'AlreadyReported', key: first.outcome.key }, delivered: [] });

      await restarted.ok('recordTurn', {
        namespace,
        reference,
        turn: { id: 't2', phase: 'Completed', origin: 'ShellNotice', joinedOrigins: [] },
      });
      const notice = await restarted.ok<Reported>('reportOnce', request('t2', 'record'));
      expect(notice).toEqual({ outcome: { kind: 'NotReported', reason: 'HostNoticeTurn' }, delivered: [] });
    },
  },
  {
    name: 'a host that dies between delivery and spend delivers again with the same key, never silence',
    async run(context) {
      const { host, request, record } = await child(context, 'report-crash');
      await record('t3', 'PersonMessage');
      const crashed = await host.call('reportOnce', request('t3', 'crash'));
      expect(crashed).toMatchObject({ crashed: true, delivered: [{ reason: 'Resumption' }] });
      expect(await host.exited).toBe(75);
      const restarted = context.host();
      const again = await restarted.ok<Reported>('reportOnce', request('t3', 'record'));
      expect(again.outcome.kind).toBe('Reported');
      expect(again.delivered).toEqual([{ reason: 'Resumption', key: again.outcome.key }]);
      const third = await context.host().ok<Reported>('reportOnce', request('t3', 'record'));
      expect(third.outcome).toEqual({ kind: 'AlreadyReported', key: again.outcome.key });
    },
  },
  {
    name: 'a failed delivery spends nothing: the next call reports again',
    async run(context) {
      const { host, request, record } = await child(context, 'report-failed');
      await record('t4', 'Automation');
      const failed = await host.fails('reportOnce', request('t4', 'fail'));
      expect(failed.message).toContain('the delivery failed');
      const again = await host.ok<Reported>('reportOnce', request('t4', 'record'));
      expect(again.outcome).toMatchObject({ kind: 'Reported', reason: 'Resumption' });
    },
  },
];
