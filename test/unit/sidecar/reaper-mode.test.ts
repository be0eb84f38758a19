/**
 * Which privilege mode the shell reaper gets (issue 26 #2): `Auto` never chooses the root sidecar; an unknown
 * PodSecurity level counts as `restricted`; the Privileged mode needs an administrator's opt-in on the
 * namespace (a label tenants with `edit` cannot write) as well as the `privileged` level.
 */
import { describe, expect, it } from 'vitest';
import {
  chooseReaperMode,
  type ModeInput,
  type PodSecurityLevel,
} from '../../../operator/sidecar/injection/mode.ts';

const pinned = { uid: 1000, gid: 1000 };
const input = (overrides: Partial<ModeInput>): ModeInput => ({
  requested: 'Auto',
  agentUser: undefined,
  level: undefined,
  privilegedAllowed: false,
  namespace: 'team-a',
  ...overrides,
});
const LEVELS: readonly (PodSecurityLevel | undefined)[] = [undefined, 'restricted', 'baseline', 'privileged'];

describe('chooseReaperMode', () => {
  it('Auto never runs the sidecar as root: unpinned templates are refused at every level, opted in or not', () => {
    for (const level of LEVELS)
      for (const privilegedAllowed of [false, true]) {
        const choice = chooseReaperMode(input({ level, privilegedAllowed }));
        expect(choice, `${level ?? 'unknown'} level, opt-in ${privilegedAllowed}`).toMatchObject({
          ok: false,
          message: expect.stringMatching(/Auto never runs the sidecar as root.*runAsUser and runAsGroup/),
        });
      }
  });

  it('Auto and SameUser run a pinned template’s sidecar as its user, at every level', () => {
    for (const requested of ['Auto', 'SameUser'] as const)
      for (const level of LEVELS)
        expect(chooseReaperMode(input({ requested, level, agentUser: pinned }))).toEqual({
          ok: true,
          mode: { kind: 'SameUser', uid: 1000, gid: 1000 },
        });
  });

  it('SameUser without a pinned user is refused with the fix', () => {
    expect(chooseReaperMode(input({ requested: 'SameUser', level: 'privileged' }))).toMatchObject({
      ok: false,
      message: expect.stringContaining('SameUser runs the sidecar as the agent'),
    });
  });

  it('Privileged needs the administrator’s opt-in label on the namespace, even where the level is privileged', () => {
    const choice = chooseReaperMode(input({ requested: 'Privileged', level: 'privileged' }));
    expect(choice).toMatchObject({
      ok: false,
      message: expect.stringContaining('sandbox.agents.dev/shell-reaper-privileged=allowed'),
    });
  });

  it('Privileged counts an unknown level as restricted: refused until the namespace enforces privileged', () => {
    for (const level of [undefined, 'restricted', 'baseline'] as const) {
      const choice = chooseReaperMode(input({ requested: 'Privileged', level, privilegedAllowed: true }));
      expect(choice, level ?? 'unknown').toMatchObject({
        ok: false,
        message: expect.stringContaining(
          `enforces PodSecurity ${level ?? 'restricted'} (${level === undefined ? 'unlabelled' : 'labelled'})`,
        ),
      });
    }
  });

  it('Privileged, opted in, in a privileged namespace: root, with the socket handed to a pinned agent', () => {
    const allowed = input({ requested: 'Privileged', level: 'privileged', privilegedAllowed: true });
    expect(chooseReaperMode(allowed)).toEqual({ ok: true, mode: { kind: 'Privileged' } });
    expect(chooseReaperMode({ ...allowed, agentUser: pinned })).toEqual({
      ok: true,
      mode: { kind: 'Privileged', agent: pinned },
    });
  });
});
