import { describe, expect, it } from 'vitest';
import { isForeignReference } from '../../../operator/exclusivity/foreign.ts';
import { deletionView } from '../../../operator/cli/plugin/deletion-view.ts';
import { referencesView } from '../../../operator/cli/plugin/references-view.ts';
import { shellsView } from '../../../operator/cli/plugin/shells-view.ts';
import {
  event,
  malformedReference,
  minutesAgo,
  parsedReference,
  pod,
  reference,
  sandbox,
} from './plugin-fixtures.ts';

const foreignDecision = (blocking: string[]) => ({
  decision: {
    verdict: 'Foreign',
    evidence: 'Index',
    blockingReferences: blocking,
    blockingCount: blocking.length,
    reason: `${blocking.length} reference(s) foreign to worktree wt-1`,
    decidedAt: minutesAgo(4).toISOString(),
  },
});

describe('the references view', () => {
  it('marks exactly the references the operator’s predicate calls foreign', () => {
    const view = referencesView(sandbox({ worktree: 'wt-1' }), [
      parsedReference('own', { worktree: 'wt-1' }),
      parsedReference('other', { worktree: 'wt-2' }),
      parsedReference('none'),
      parsedReference('own-gone', { worktree: 'wt-1', state: 'Detached' }),
    ]);
    expect(view.rows.map((row) => [row.name, row.foreign])).toEqual([
      ['none', true],
      ['other', true],
      ['own', false],
      ['own-gone', false],
    ]);
    for (const row of view.rows)
      expect(row.foreign).toBe(isForeignReference({ worktree: row.worktree }, { worktree: 'wt-1' }));
    expect(view.counts).toEqual({ total: 4, attached: 3, detached: 1, foreign: 2, malformed: 0 });
  });

  it('calls every reference foreign to a sandbox that belongs to no worktree', () => {
    const view = referencesView(sandbox(), [parsedReference('a', { worktree: 'wt-1' })]);
    expect(view.rows[0]?.foreign).toBe(true);
  });

  it('counts a malformed reference as foreign and says which field is wrong', () => {
    const view = referencesView(sandbox({ worktree: 'wt-1' }), [malformedReference('broken')]);
    expect(view.rows[0]).toMatchObject({ name: 'broken', foreign: true, state: undefined });
    expect(view.rows[0]?.malformed).toMatch(/^spec\.role: /);
    expect(view.counts).toMatchObject({ foreign: 1, malformed: 1 });
  });

  it('keeps the counts of all references when only the foreign ones are listed', () => {
    const view = referencesView(
      sandbox({ worktree: 'wt-1' }),
      [parsedReference('own', { worktree: 'wt-1' }), parsedReference('other', { worktree: 'wt-2' })],
      { foreignOnly: true },
    );
    expect(view.rows.map((row) => row.name)).toEqual(['other']);
    expect(view.counts.total).toBe(2);
  });
});

describe('the deletion view', () => {
  it('names the blocking references as they are now, and those forgotten since the decision', () => {
    const view = deletionView(
      sandbox({
        worktree: 'wt-1',
        deleting: true,
        status: { phase: 'Blocked', ...foreignDecision(['b', 'gone']) },
      }),
      [parsedReference('a', { worktree: 'wt-1' }), parsedReference('b', { worktree: 'wt-2' })],
      [pod('sbx-a-0'), pod('unrelated', { held: false })],
      [event('DeletionBlocked', 'Foreign (Index)', 3, 'Warning')],
    );
    expect(view.state).toBe('Blocked');
    expect(view.blocking).toEqual([
      expect.objectContaining({ name: 'b', worktree: 'wt-2', foreign: true }),
      { name: 'gone', gone: true },
    ]);
    expect(view.heldPods.map((p) => p.name)).toEqual(['sbx-a-0']);
    expect(view.wouldBlock).toEqual([]);
    expect(view.advice.join(' ')).toContain('finishes by itself once the blocking references are forgotten');
  });

  it('tells how to erase an overflowed index', () => {
    const view = deletionView(
      sandbox({
        worktree: 'wt-1',
        deleting: true,
        status: {
          decision: { verdict: 'Overflowed', evidence: 'Index', decidedAt: minutesAgo(1).toISOString() },
          capacity: { overflowed: true, limit: 'References', observed: 513, max: 512 },
        },
      }),
      [],
      [],
      [],
    );
    expect(view.state).toBe('Blocked');
    expect(view.advice.join(' ')).toContain(
      'kubectl annotate sandbox sbx-a sandbox.agents.dev/erase-references=<reason>',
    );
  });

  it('is undecided while deleting without a decision, and releasing once exclusive', () => {
    expect(deletionView(sandbox({ deleting: true }), [], [], []).state).toBe('Undecided');
    const releasing = deletionView(
      sandbox({
        deleting: true,
        status: {
          decision: { verdict: 'Exclusive', evidence: 'Index', decidedAt: minutesAgo(1).toISOString() },
        },
      }),
      [],
      [],
      [],
    );
    expect(releasing.state).toBe('Releasing');
  });

  it('shows what would block the deletion of a sandbox not being deleted, ignoring a stale decision', () => {
    const view = deletionView(
      sandbox({ worktree: 'wt-1', status: foreignDecision(['old']) }),
      [parsedReference('own', { worktree: 'wt-1' }), parsedReference('other', { worktree: 'wt-2' })],
      [],
      [],
    );
    expect(view.state).toBe('NotDeleting');
    expect(view.decision).toBeUndefined();
    expect(view.wouldBlock.map((row) => row.name)).toEqual(['other']);
    expect(view.advice.at(-1)).toContain('would be blocked by 1 foreign reference(s)');
  });

  it('says a sandbox is suspended, and that a deletion is decided as always', () => {
    const suspended = {
      type: 'Suspended',
      status: 'True' as const,
      reason: 'Idle',
      message: 'no SessionReference Attached since …; its pods are stopped; an attach resumes it',
      lastTransitionTime: minutesAgo(2).toISOString(),
    };
    const view = deletionView(
      sandbox({ worktree: 'wt-1', status: { conditions: [suspended] } }),
      [parsedReference('other', { worktree: 'wt-2' })],
      [],
      [],
    );
    expect(view.suspended).toMatchObject({ reason: 'Idle' });
    expect(view.advice[0]).toBe(
      'It is suspended (Idle): its pods are stopped, its references and guards kept; a deletion is decided as ' +
        'for any sandbox.',
    );
    expect(view.advice.at(-1)).toContain('it would stay suspended meanwhile');
    const running = deletionView(
      sandbox({ status: { conditions: [{ ...suspended, status: 'False', reason: 'Running' }] } }),
      [],
      [],
      [],
    );
    expect(running.suspended).toBeUndefined();
  });

  it('says first when a node drain waits on the sandbox, and nothing of drains when none does', () => {
    const condition = (status: 'True' | 'False') => ({
      type: 'DisruptionBlocked',
      status,
      reason: status === 'True' ? 'NodeDraining' : 'NoDrain',
      message: status === 'True' ? 'node n1 (Cordoned) being drained; …' : '',
      lastTransitionTime: minutesAgo(2).toISOString(),
    });
    const held = deletionView(sandbox({ status: { conditions: [condition('True')] } }), [], [], []);
    expect(held.drain).toMatchObject({
      reason: 'NodeDraining',
      message: 'node n1 (Cordoned) being drained; …',
    });
    expect(held.advice[0]).toContain('A node drain waits on this sandbox');
    const free = deletionView(sandbox({ status: { conditions: [condition('False')] } }), [], [], []);
    expect(free.drain).toBeUndefined();
    expect(free.advice.join(' ')).not.toContain('drain');
  });

  it('says first when a node drain is moving the sandbox (Disrupting)', () => {
    const disrupting = {
      type: 'Disrupting',
      status: 'True',
      reason: 'NodeDraining',
      message: 'node n1 (Cordoned) being drained; pod sbx-0 moves to another node once …',
      lastTransitionTime: minutesAgo(1).toISOString(),
    };
    const moving = deletionView(sandbox({ status: { conditions: [disrupting] } }), [], [], []);
    expect(moving.drain).toMatchObject({ type: 'Disrupting', reason: 'NodeDraining' });
    expect(moving.advice[0]).toContain('A node drain is moving this sandbox');
    const moved = deletionView(
      sandbox({ status: { conditions: [{ ...disrupting, status: 'False', reason: 'DrainEnded' }] } }),
      [],
      [],
      [],
    );
    expect(moved.drain).toBeUndefined();
  });

  it('keeps the ten most recent Events', () => {
    const events = Array.from({ length: 12 }, (_, i) => event('DeletionBlocked', `#${i}`, 12 - i));
    const view = deletionView(sandbox({ deleting: true }), [], [], events);
    expect(view.events.map((e) => e.message)).toEqual(events.slice(2).map((e) => e.message));
  });
});

describe('the shells view', () => {
  const completed = { turn: { id: 't-7', phase: 'Completed', origin: 'ParentMessage' } };
  const reaper = { shellReaper: { enabled: true, gracePeriodSeconds: 5 } };

  it('reports the retire of a completed subagent turn, with only the reaper’s Events', () => {
    const retired = { ...completed, shells: { retiredTurn: 't-7', retiredGroups: 3, unreachable: 0 } };
    const view = shellsView(
      reference('sub', { role: 'Subagent', worktree: 'wt-2', status: retired }),
      sandbox({ worktree: 'wt-1', ...reaper }),
      [event('ShellsRetired', '3 groups', 1), event('Scheduled', 'not the reaper', 1)],
    );
    expect(view.shells).toMatchObject({ retiredTurn: 't-7', retiredGroups: 3 });
    expect(view.events.map((e) => e.reason)).toEqual(['ShellsRetired']);
    expect(view.notes).toEqual([]);
  });

  it.each([
    ['a root session', { role: 'Root' as const, status: completed }, reaper, "only a subagent's shells"],
    ['a disabled reaper', { role: 'Subagent' as const, status: completed }, {}, 'runs no shell reaper'],
    [
      'a failed turn',
      { role: 'Subagent' as const, status: { turn: { id: 't-8', phase: 'Failed' } } },
      reaper,
      'a failed or interrupted turn keeps its shells',
    ],
    [
      'a running turn',
      { role: 'Subagent' as const, status: { turn: { id: 't-9', phase: 'Running' } } },
      reaper,
      'still running',
    ],
    [
      'a completed turn not yet retired',
      { role: 'Subagent' as const, status: completed },
      reaper,
      'not recorded yet',
    ],
    ['no turn at all', { role: 'Subagent' as const }, reaper, 'no turn for this session yet'],
  ])('explains why nothing was retired: %s', (_case, fixture, sandboxOptions, note) => {
    const view = shellsView(reference('s', fixture), sandbox(sandboxOptions), []);
    expect(view.shells).toBeUndefined();
    expect(view.notes.join(' ')).toContain(note);
  });

  it('says when the sandbox is gone', () => {
    expect(shellsView(reference('s'), undefined, []).notes[0]).toBe(
      'Sandbox sbx-a does not exist (any more).',
    );
  });
});
