/**
 * The operator-bounds policy repeats the shell reaper's name and capabilities (operator/api imports nothing of
 * ours): held here to what the injection really adds, so the operator's own pods stay admitted.
 */
import { describe, expect, it } from 'vitest';
import { BASELINE_CAPABILITIES } from '../../../operator/api/template-checks.ts';
import { REAPER_CONTAINER_NAME, REAPER_EXTRA_CAPABILITIES } from '../../../operator/api/operator-reach.ts';
import { PRIVILEGED_CAPABILITIES, REAPER_CONTAINER } from '../../../operator/sidecar/injection/injection.ts';

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
