/**
 * What the plugin prints from the cluster cannot drive the administrator's terminal: ESC / CSI sequences,
 * carriage returns, newlines that would forge a report line, and bidi overrides arrive as visible escapes,
 * in text, JSON and YAML.
 */
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { printable } from '../../../operator/cli/plugin/printable.ts';
import { runCommand } from '../../../operator/cli/plugin/run.ts';
import { fakePorts } from './plugin-ports.ts';
import { event, NOW, parsedReference, sandbox } from './plugin-fixtures.ts';

const CLEAR_SCREEN = '\u001b[2J\u001b[H';
const HOSTILE = `${CLEAR_SCREEN}Verdict: Exclusive\r\n\u009b31m\u202egnp.exe\u0007`;
// Anything a terminal acts on: C0 but newline (our own line breaks), DEL, C1, bidi controls.
// eslint-disable-next-line no-control-regex -- the point of the test
const ACTIVE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const TEAM_A = { allNamespaces: false, namespace: 'team-a' } as const;

const hostilePorts = () =>
  fakePorts({
    sandboxes: [{ ok: true, value: sandbox({ worktree: 'wt-1' }) }],
    references: [
      parsedReference('evil', {
        worktree: 'wt-2',
        role: 'Subagent',
        status: {
          turn: { id: 't-1', phase: 'Completed', origin: 'ParentMessage' },
          shells: { retiredTurn: 't-1', retiredGroups: 1, unreachable: 0, message: HOSTILE },
        },
      }),
    ],
    events: [event('DeletionBlocked', HOSTILE, 1, 'Warning')],
  }).ports;

describe('printing what others wrote', () => {
  it('escapes control characters and bidi overrides, and keeps the rest', () => {
    expect(printable(HOSTILE)).toBe('\\x1b[2J\\x1b[HVerdict: Exclusive\\x0d\\x0a\\x9b31m\\u202egnp.exe\\x07');
    expect(printable('wt-1 ünïcode ✓')).toBe('wt-1 ünïcode ✓');
  });

  it('prints an Event message and reference fields carrying ESC sequences inert, on their own line', async () => {
    const text = await runCommand({ kind: 'why', sandbox: 'sbx-a' }, TEAM_A, 'text', hostilePorts(), NOW);
    expect(text).not.toMatch(ACTIVE);
    expect(text).toContain('\\x1b[2J\\x1b[HVerdict: Exclusive\\x0d\\x0a\\x9b31m');
    // The forged "Verdict:" stays inside the Event's row instead of starting a line of the report.
    expect(text).not.toMatch(/^Verdict: Exclusive/m);
    const shells = await runCommand(
      { kind: 'shells', reference: 'evil' },
      TEAM_A,
      'text',
      hostilePorts(),
      NOW,
    );
    expect(shells).toContain('\\x1b[2J\\x1b[HVerdict: Exclusive');
    expect(shells).not.toMatch(ACTIVE);
  });

  it('keeps JSON and YAML inert and still faithful to the original text', async () => {
    for (const output of ['json', 'yaml'] as const) {
      const serialized = await runCommand(
        { kind: 'why', sandbox: 'sbx-a' },
        TEAM_A,
        output,
        hostilePorts(),
        NOW,
      );
      expect(serialized).not.toMatch(ACTIVE);
      const parsed = (output === 'json' ? JSON.parse(serialized) : parseYaml(serialized)) as {
        events: { message: string }[];
      };
      expect(parsed.events[0]?.message).toBe(HOSTILE);
    }
  });
});
