/**
 * The operator-bounds policy repeats the shell reaper's name and capabilities (operator/api imports nothing of
 * ours): held here to what the injection really adds, so the operator's own pods stay admitted.
 */
import { describe, expect, it } from 'vitest';
import { BASELINE_CAPABILITIES } from '../../../operator/api/template-checks.ts';
import { REAPER_EXTRA_CAPABILITIES } from '../../../operator/api/reaper-bounds.ts';
import {
  REAPER_COMMAND,
  REAPER_ENV_PREFIX,
  REAPER_MOUNT_PATHS,
  REAPER_PROBE_COMMAND,
} from '../../../operator/api/reaper-shape.ts';
import { RESERVED_VOLUMES } from '../../../operator/api/template-placement.ts';
import {
  PRIVILEGED_CAPABILITIES,
  REAPER_VOLUMES,
  reaperInjection,
  type ReaperMode,
} from '../../../operator/sidecar/injection/injection.ts';

describe('the reaper as the operator bounds know it', () => {
  it('may keep every capability its privileged mode adds', () => {
    const allowed = new Set<string>([...BASELINE_CAPABILITIES, ...REAPER_EXTRA_CAPABILITIES]);
    expect(PRIVILEGED_CAPABILITIES.filter((capability) => !allowed.has(capability))).toEqual([]);
  });

  it('adds nothing to baseline that the privileged mode does not use', () =>
    expect(
      REAPER_EXTRA_CAPABILITIES.filter((c) => !(PRIVILEGED_CAPABILITIES as readonly string[]).includes(c)),
    ).toEqual([]));
});

describe.each<[string, ReaperMode]>([
  ['SameUser', { kind: 'SameUser', uid: 1000, gid: 1000 }],
  ['Privileged', { kind: 'Privileged', agent: { uid: 1000, gid: 1000 } }],
])('the reaper container of the %s mode, as the bounds hold its shape (reaper-bounds.ts)', (_, mode) => {
  const reaper = reaperInjection({
    mode,
    image: 'registry.example/operator:1',
    command: REAPER_COMMAND,
    sandbox: 's',
    gracePeriodSeconds: 5,
  }).initContainer as Record<string, unknown>;
  type Env = { name: string; value?: string; valueFrom?: Record<string, unknown> };
  type Mount = { name: string; mountPath: string; subPath?: string };

  it('runs the command and probe the bounds require, and nothing they refuse', () => {
    expect(reaper['command']).toEqual(REAPER_COMMAND);
    expect(reaper['startupProbe']).toMatchObject({ exec: { command: REAPER_PROBE_COMMAND } });
    const refused = ['args', 'workingDir', 'envFrom', 'lifecycle', 'livenessProbe', 'readinessProbe'];
    expect(refused.filter((field) => field in reaper)).toEqual([]);
    expect('volumeDevices' in reaper).toBe(false);
  });

  it('has only variables the bounds admit: the prefix, a value or a fieldRef', () => {
    const env = reaper['env'] as Env[];
    expect(env.length).toBeGreaterThan(5);
    expect(env.filter((e) => !e.name.startsWith(REAPER_ENV_PREFIX)).map((e) => e.name)).toEqual([]);
    expect(
      env.filter((e) => e.valueFrom !== undefined && Object.keys(e.valueFrom).join() !== 'fieldRef'),
    ).toEqual([]);
  });

  it('mounts exactly its own volumes at the paths the bounds name', () => {
    const mounts = (reaper['volumeMounts'] as Mount[]).map((m) => [m.name, m.mountPath, m.subPath]);
    expect(mounts).toEqual(Object.entries(REAPER_MOUNT_PATHS).map(([name, path]) => [name, path, undefined]));
  });
});

describe('the reaper’s volumes as the template policy and the bounds know them', () => {
  const injection = reaperInjection({
    mode: { kind: 'SameUser', uid: 1000, gid: 1000 },
    image: 'registry.example/operator:1',
    command: ['node'],
    sandbox: 's',
    gracePeriodSeconds: 5,
  });

  it('reserves every volume the injection adds', () =>
    expect(
      injection.volumes.map((v) => v['name']).filter((name) => !RESERVED_VOLUMES.some((r) => r === name)),
    ).toEqual([]));

  it('gives the agent only the socket, read-only, and the output directory', () =>
    expect(injection.agentVolumeMounts.map((m) => [m['name'], m['readOnly'] ?? false])).toEqual([
      [REAPER_VOLUMES.socket, true],
      [REAPER_VOLUMES.output, false],
    ]));
});
