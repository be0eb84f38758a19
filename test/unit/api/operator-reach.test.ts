/**
 * The operator-bounds policy repeats the shell reaper's name and capabilities (operator/api imports nothing of
 * ours): held here to what the injection really adds, so the operator's own pods stay admitted.
 */
import { describe, expect, it } from 'vitest';
import { BASELINE_CAPABILITIES } from '../../../operator/api/template-checks.ts';
import { REAPER_CONTAINER_NAME, REAPER_EXTRA_CAPABILITIES } from '../../../operator/api/operator-reach.ts';
import { RESERVED_VOLUMES } from '../../../operator/api/template-placement.ts';
import {
  PRIVILEGED_CAPABILITIES,
  REAPER_CONTAINER,
  REAPER_VOLUMES,
  reaperInjection,
} from '../../../operator/sidecar/injection/injection.ts';

describe('the reaper as the operator bounds know it', () => {
  it('has the injected container’s name', () => expect(REAPER_CONTAINER_NAME).toBe(REAPER_CONTAINER));

  it('may keep every capability its privileged mode adds', () => {
    const allowed = new Set<string>([...BASELINE_CAPABILITIES, ...REAPER_EXTRA_CAPABILITIES]);
    expect(PRIVILEGED_CAPABILITIES.filter((capability) => !allowed.has(capability))).toEqual([]);
  });

  it('adds nothing to baseline that the privileged mode does not use', () =>
    expect(
      REAPER_EXTRA_CAPABILITIES.filter((c) => !(PRIVILEGED_CAPABILITIES as readonly string[]).includes(c)),
    ).toEqual([]));
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
