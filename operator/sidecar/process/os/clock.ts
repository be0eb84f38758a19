/**
 * The real Clock. `now()` is CLOCK_MONOTONIC (process.hrtime), which every process on the node shares, so a
 * grace period journaled before a restart is still measured correctly after it, and NTP steps or wall-clock
 * jumps never shorten or lengthen it (docs/sidecar.md, failure plan case 28).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from './ports.ts';

export const monotonicClock: Clock = {
  now: () => Number(process.hrtime.bigint() / 1_000_000n),
  wallNow: () => new Date(),
  sleep: (ms) => delay(ms),
};
