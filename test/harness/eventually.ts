/**
 * The one waiting helper of the tests: polls `check` until it returns a value, and on timeout says what it
 * last saw. A check returns the value it waited for, or `pending(seen)` (or undefined) to go on polling:
 *
 *   await eventually('sbx blocked', async () => {
 *     const phase = (await getSandbox(ns, 'sbx'))?.status?.phase;
 *     return phase === 'Blocked' ? phase : pending({ phase });
 *   });
 *   // Error: timed out after 30000 ms waiting for sbx blocked; last saw {"phase":"Terminating"}
 */
const PENDING = Symbol('pending');

export type Pending = { readonly [PENDING]: true; readonly seen: unknown };

/** Not yet: go on polling, and report `seen` if time runs out. */
export const pending = (seen: unknown): Pending => ({ [PENDING]: true, seen });

const isPending = (value: unknown): value is Pending =>
  typeof value === 'object' && value !== null && PENDING in value;

export async function eventually<T>(
  what: string,
  check: () => Promise<T | Pending | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last:
    | { readonly kind: 'nothing' }
    | { readonly kind: 'seen'; readonly seen: unknown }
    | {
        readonly kind: 'error';
        readonly error: unknown;
      } = { kind: 'nothing' };
  let pause = 20;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && !isPending(value)) return value;
      if (isPending(value)) last = { kind: 'seen', seen: value.seen };
    } catch (error) {
      last = { kind: 'error', error };
    }
    if (Date.now() > deadline) {
      const said =
        last.kind === 'seen'
          ? `; last saw ${describe(last.seen)}`
          : last.kind === 'error'
            ? `; last check failed: ${last.error instanceof Error ? last.error.message : String(last.error)}`
            : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${said}`, {
        cause: last.kind === 'error' ? last.error : undefined,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 200);
  }
}

function describe(seen: unknown): string {
  try {
    const json = JSON.stringify(seen) as string | undefined;
    return json ?? String(seen);
  } catch {
    return String(seen);
  }
}
