import { describe, expect, it } from 'vitest';
import {
  MARKER_ENV,
  markerEnvironment,
  markerNamesShell,
  parseMarker,
} from '../../../operator/sidecar/contract/marker.ts';

const environ = (vars: Record<string, string>) =>
  Object.entries(vars)
    .map(([k, v]) => `${k}=${v}`)
    .join('\0') + '\0';

describe('parseMarker', () => {
  it('reads session, turn and shell from a NUL-separated environ block', () => {
    const env = environ({
      PATH: '/bin',
      ...markerEnvironment({ session: 'ws_1', turn: 't-7', shell: 'abc-1' }),
    });
    expect(parseMarker(env)).toEqual({
      kind: 'Marked',
      marker: { session: 'ws_1', turn: 't-7', shell: 'abc-1' },
    });
  });

  it('treats a process without the variables as unmarked', () => {
    expect(parseMarker(environ({ PATH: '/bin', HOME: '/root' }))).toEqual({ kind: 'Unmarked' });
    expect(parseMarker('')).toEqual({ kind: 'Unmarked' });
  });

  it('keeps session and turn when the shell variable is missing or malformed', () => {
    const env = environ({
      [MARKER_ENV.session]: 'ws_1',
      [MARKER_ENV.turn]: 't1',
      [MARKER_ENV.shell]: '../etc',
    });
    expect(parseMarker(env)).toEqual({ kind: 'Marked', marker: { session: 'ws_1', turn: 't1' } });
  });

  it('refuses values that are not ids, so a hostile environment names no session', () => {
    for (const session of ['', 'a b', '-x', 'x'.repeat(129), 'ws_1\n']) {
      expect(parseMarker(environ({ [MARKER_ENV.session]: session, [MARKER_ENV.turn]: 't1' }))).toEqual({
        kind: 'Unmarked',
      });
    }
  });

  it('reads the value after the first "=" only', () => {
    const env = `${MARKER_ENV.session}=ws_1\0${MARKER_ENV.turn}=t=1\0`;
    expect(parseMarker(env)).toEqual({ kind: 'Unmarked' });
  });
});

describe('markerNamesShell', () => {
  const shell = { session: 's', turn: 't', shell: 'sh1' };
  it('matches only the same session, turn and shell', () => {
    expect(markerNamesShell(shell, shell)).toBe(true);
    expect(markerNamesShell({ ...shell, turn: 't2' }, shell)).toBe(false);
    expect(markerNamesShell({ session: 's', turn: 't' }, shell)).toBe(false);
  });
});
