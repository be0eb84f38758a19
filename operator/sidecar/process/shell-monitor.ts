/**
 * The source of shell notices. Each tick surveys the registered, un-fenced shells: a group with no live
 * member has exited (an exit notice, held for a short grace), and a complete output line containing the
 * shell's `match` literal publishes one match notice. A shell whose turn is fenced publishes nothing: the
 * check and the publish happen under the reaper's lock, the same lock the fence is taken under.
 */
import type { Logger } from 'pino';
import type { JournalEntry } from './ledger/journal-entries.ts';
import type { OutputTail } from './os/output-tail.ts';
import type { Clock, ProcessTable, Signaller } from './os/ports.ts';
import { identityKey } from '../contract/proc-stat.ts';
import { fenceOf, type Ledger, type ShellRecord } from './ledger/shell-ledger.ts';
import { indexSnapshot, surveyGroup } from './retire/survey.ts';
import type { NoticeOutbox } from './notices/notice-outbox.ts';

export interface MonitorContext {
  readonly table: ProcessTable;
  readonly signaller: Signaller;
  readonly outbox: NoticeOutbox;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly ledger: Ledger;
  /** How long an exit notice is held before the host may read it. */
  readonly holdMs: number;
  readonly tail: OutputTail | undefined;
  record(entry: JournalEntry): Promise<void>;
  withLock<T>(work: () => Promise<T>): Promise<T>;
}

const LINE_MAX = 512;

function publishable(ledger: Ledger, record: ShellRecord): boolean {
  const { shell, session, turn } = record.group;
  return (
    ledger.shells.get(shell) === record &&
    !ledger.retiring.has(shell) &&
    fenceOf(ledger, session, turn) === undefined
  );
}

export function createShellMonitor(ctx: MonitorContext): { tick(): Promise<void> } {
  /** Members proven ours per shell, so a tick rarely needs to read an environment. */
  const known = new Map<string, Set<string>>();

  const matchLine = async (record: ShellRecord): Promise<string | undefined> => {
    const pattern = record.group.match;
    if (ctx.tail === undefined) return undefined;
    if (pattern === undefined || record.matched) {
      await ctx.tail.bound(record.group.shell);
      return undefined;
    }
    const lines = await ctx.tail.nextLines(record.group.shell);
    return lines.find((line) => line.includes(pattern));
  };

  const publish = async (record: ShellRecord, kind: 'Exit' | 'Match', line?: string) => {
    const { shell, session, turn } = record.group;
    const at = ctx.clock.wallNow().toISOString();
    const dueAt = ctx.clock.now() + (kind === 'Exit' ? ctx.holdMs : 0);
    const notice =
      line === undefined
        ? { kind, shell, session, turn, at, dueAt }
        : { kind, shell, session, turn, at, dueAt, line: line.slice(0, LINE_MAX) };
    const published = await ctx.outbox.publish(notice);
    ctx.logger.info({ shell, session, turn, kind, seq: published.seq }, 'published a shell notice');
  };

  return {
    async tick() {
      const watched = [...ctx.ledger.shells.values()].filter(
        (r) => r.status === 'Running' && publishable(ctx.ledger, r),
      );
      for (const shell of known.keys()) if (!ctx.ledger.shells.has(shell)) known.delete(shell);
      if (watched.length === 0) return;
      const snapshot = indexSnapshot(await ctx.table.scan());
      for (const record of watched) {
        const { group } = record;
        const members =
          known.get(group.shell) ??
          new Set([identityKey({ pid: group.pgid, startTime: group.leaderStartTime })]);
        known.set(group.shell, members);
        const judgement = await surveyGroup(
          ctx.table,
          snapshot,
          group,
          members,
          ctx.signaller.protectedPids(),
        );
        if (judgement.kind === 'Proven') for (const m of judgement.members) members.add(identityKey(m));
        const exited = judgement.kind === 'Empty' || judgement.kind === 'Recycled';
        const line = await matchLine(record);
        if (line === undefined && !exited) continue;
        await ctx.withLock(async () => {
          if (!publishable(ctx.ledger, record)) return;
          const at = ctx.clock.wallNow().toISOString();
          if (line !== undefined && !record.matched) {
            await ctx.record({ type: 'ShellMatched', at, shell: group.shell });
            await publish(record, 'Match', line);
          }
          if (exited && record.status === 'Running') {
            await ctx.record({ type: 'ShellExited', at, shell: group.shell });
            await publish(record, 'Exit');
          }
        });
      }
    },
  };
}
