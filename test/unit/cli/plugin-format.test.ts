import { describe, expect, it } from 'vitest';
import { deletionView } from '../../../operator/cli/plugin/deletion-view.ts';
import {
  age,
  renderDeletion,
  renderReferences,
  renderShells,
  table,
} from '../../../operator/cli/plugin/format.ts';
import { referencesView } from '../../../operator/cli/plugin/references-view.ts';
import { shellsView } from '../../../operator/cli/plugin/shells-view.ts';
import {
  event,
  malformedReference,
  minutesAgo,
  NOW,
  parsedReference,
  pod,
  reference,
  sandbox,
} from './plugin-fixtures.ts';

describe('plugin text', () => {
  it('aligns table columns three spaces apart, without trailing spaces', () => {
    expect(
      table(
        ['NAME', 'X'],
        [
          ['a', 'long value'],
          ['longer-name', ''],
        ],
      ),
    ).toBe('NAME          X\na             long value\nlonger-name\n');
  });

  it.each([
    [30 / 60, '30s'],
    [5, '5m'],
    [125, '2h'],
    [60 * 24 * 3, '3d'],
  ])('writes an age of %d minutes as %s', (minutes, text) => {
    expect(age(minutesAgo(minutes), NOW)).toBe(text);
  });

  it('lists references with a FOREIGN column and a summary', () => {
    const view = referencesView(sandbox({ worktree: 'wt-1' }), [
      parsedReference('own', { worktree: 'wt-1', session: 'workspace_1' }),
      parsedReference('other', { worktree: 'wt-2', session: 'workspace_2', state: 'Detached' }),
      malformedReference('broken'),
    ]);
    const text = renderReferences(view);
    const lines = text.split('\n');
    expect(lines[0]?.split(/\s{2,}/)).toEqual([
      'NAME',
      'SESSION',
      'WORKTREE',
      'ROLE',
      'STATE',
      'TURN',
      'FOREIGN',
    ]);
    expect(lines[1]?.split(/\s{2,}/)).toEqual([
      'broken',
      '<none>',
      '<none>',
      '<none>',
      '<none>',
      '<none>',
      'yes (malformed)',
    ]);
    expect(lines[2]?.split(/\s{2,}/)).toEqual([
      'other',
      'workspace_2',
      'wt-2',
      'Root',
      'Detached',
      '<none>',
      'yes',
    ]);
    expect(lines[3]?.split(/\s{2,}/)).toEqual([
      'own',
      'workspace_1',
      'wt-1',
      'Root',
      'Attached',
      '<none>',
      'no',
    ]);
    expect(text).toContain(
      'Sandbox team-a/sbx-a (worktree wt-1): 3 reference(s), 1 attached, 1 detached; 2 foreign to its worktree, ' +
        '1 malformed (counted as foreign).',
    );
    expect(text).toMatch(/Malformed:\n {2}broken: spec\.role: /);
  });

  it('says so when a sandbox has no references', () => {
    expect(renderReferences(referencesView(sandbox(), []))).toBe(
      'Sandbox team-a/sbx-a (no worktree): 0 reference(s), 0 attached, 0 detached; 0 foreign to its worktree.\n',
    );
  });

  it('explains a blocked deletion: verdict, reason, condition, blockers, held pods, advice and Events', () => {
    const view = deletionView(
      sandbox({
        worktree: 'wt-1',
        deleting: true,
        status: {
          phase: 'Blocked',
          decision: {
            verdict: 'Foreign',
            evidence: 'Index',
            blockingReferences: ['other'],
            blockingCount: 1,
            reason: '1 reference(s) foreign to worktree wt-1',
            decidedAt: minutesAgo(4).toISOString(),
          },
          conditions: [
            {
              type: 'DeletionBlocked',
              status: 'True',
              reason: 'Foreign',
              message: 'blocked by other',
              lastTransitionTime: minutesAgo(4).toISOString(),
            },
          ],
        },
      }),
      [parsedReference('other', { worktree: 'wt-2', session: 'workspace_2' })],
      [pod('sbx-a-0')],
      [event('DeletionBlocked', 'Foreign (Index): blocked by other', 4, 'Warning')],
    );
    const text = renderDeletion(view, NOW);
    expect(text).toContain(
      'Sandbox team-a/sbx-a (worktree wt-1) is being deleted and the deletion is BLOCKED (requested 5m ago).',
    );
    expect(text).toContain('Verdict:    Foreign (evidence: Index), 4m ago');
    expect(text).toContain('Reason:     1 reference(s) foreign to worktree wt-1');
    expect(text).toContain('Condition:  DeletionBlocked=True (Foreign): blocked by other');
    expect(text).toMatch(/Blocking references \(1\):\n {2}NAME .*FOREIGN\n {2}other +workspace_2 +wt-2 /);
    expect(text).toContain("Pods held by the operator's finalizer: sbx-a-0");
    expect(text).toMatch(
      /Recent events:\n {2}LAST SEEN +TYPE +REASON +MESSAGE\n {2}4m +Warning +DeletionBlocked +Foreign/,
    );
  });

  it('prints a suspended sandbox’s Suspended condition', () => {
    const suspended = {
      type: 'Suspended',
      status: 'True' as const,
      reason: 'Requested',
      message: 'spec.operatingMode is Suspended; its pods are stopped; set it to Running to resume',
      lastTransitionTime: minutesAgo(3).toISOString(),
    };
    const view = deletionView(sandbox({ worktree: 'wt-1', status: { conditions: [suspended] } }), [], [], []);
    expect(renderDeletion(view, NOW)).toContain(
      'Suspended:  Suspended=True (Requested): spec.operatingMode is Suspended; its pods are stopped; set it to ' +
        'Running to resume',
    );
    expect(renderDeletion(deletionView(sandbox({ worktree: 'wt-1' }), [], [], []), NOW)).not.toContain(
      'Suspended:',
    );
  });

  it('reports a retire and the reaper setting for a session', () => {
    const view = shellsView(
      reference('sub', {
        role: 'Subagent',
        worktree: 'wt-2',
        session: 'workspace_7',
        status: {
          turn: { id: 't-7', phase: 'Completed', origin: 'ParentMessage' },
          shells: {
            retiredTurn: 't-7',
            retiredGroups: 3,
            unreachable: 0,
            retiredAt: minutesAgo(2).toISOString(),
          },
        },
      }),
      sandbox({ worktree: 'wt-1', shellReaper: { enabled: true, gracePeriodSeconds: 5 } }),
      [event('ShellsRetired', 'retired 3 shell group(s) of turn t-7', 2)],
    );
    const text = renderShells(view, NOW);
    expect(text).toContain(
      'SessionReference team-a/sub: Subagent session workspace_7 of workspace_root in sandbox sbx-a (worktree wt-2), Attached.',
    );
    expect(text).toContain('Turn:     t-7 Completed (opened by ParentMessage)');
    expect(text).toContain('Shells:   3 group(s) retired at the end of turn t-7, 2m ago; 0 unreachable');
    expect(text).toContain('Reaper:   enabled, 5s between SIGTERM and SIGKILL');
    expect(text).toMatch(/Shell reaper events:\n {2}LAST SEEN.*\n {2}2m +Normal +ShellsRetired +retired 3/);
  });
});
