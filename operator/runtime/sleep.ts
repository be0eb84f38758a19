/** Waits `ms`, or less if `signal` aborts first; resolves true when the wait was cut short by the signal. */
import { setTimeout as wait } from 'node:timers/promises';

export async function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  try {
    await wait(ms, undefined, { signal });
    return false;
  } catch (error) {
    if (signal.aborted) return true;
    throw error;
  }
}
