/** Scripted ledger and locator for the legacy walk: latencies and answers per session, driven by fake timers. */
import type {
  LedgerOwner,
  LedgerReport,
  RuntimeLocation,
  RuntimeLocator,
  SessionLedger,
} from '../../../operator/ledger-walk/index.ts';

export type Script = { readonly latencyMs: number } & (
  { readonly answer: RuntimeLocation } | { readonly error: Error } | { readonly hang: true }
);

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted', { cause: signal.reason }));
    });
  });

export class ScriptedLocator implements RuntimeLocator {
  readonly calls: string[] = [];
  readonly aborted: string[] = [];
  /** When (on the fake clock) each session's lookup saw its signal abort. */
  readonly abortedAt = new Map<string, number>();
  inFlight = 0;
  maxInFlight = 0;
  constructor(private readonly scripts: ReadonlyMap<string, Script>) {}

  async locate(session: string, signal: AbortSignal): Promise<RuntimeLocation> {
    this.calls.push(session);
    const script = this.scripts.get(session);
    if (!script) throw new Error(`unscripted session ${session}`);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    signal.addEventListener('abort', () => {
      this.aborted.push(session);
      this.abortedAt.set(session, Date.now());
    });
    try {
      await sleep('hang' in script ? 1e9 : script.latencyMs, signal);
      if ('error' in script) throw script.error;
      if ('answer' in script) return script.answer;
      throw new Error('unreachable: hang resolved');
    } finally {
      this.inFlight -= 1;
    }
  }
}

export class ScriptedLedger implements SessionLedger {
  calls = 0;
  /** When (on the fake clock) the ledger call saw its signal abort. */
  abortedAt: number | undefined;
  constructor(
    private readonly report: LedgerReport | Error,
    private readonly latencyMs = 44,
  ) {}

  async owners(_target: unknown, signal: AbortSignal): Promise<LedgerReport> {
    this.calls += 1;
    signal.addEventListener('abort', () => (this.abortedAt ??= Date.now()));
    await sleep(this.latencyMs, signal);
    if (this.report instanceof Error) throw this.report;
    return this.report;
  }
}

export const owner = (session: string, extra: Partial<LedgerOwner> = {}): LedgerOwner => ({
  session,
  sessions: [session],
  worktree: undefined,
  allocation: undefined,
  ...extra,
});

export const located = (sandbox: string, worktree: string | undefined): RuntimeLocation => ({
  kind: 'Located',
  sandbox,
  provider: 'kubernetes',
  worktree,
});

/**
 * A session the locator places in another sandbox: it does not hold the target, and its owner's history is
 * known (a `not-allocated` answer alone leaves an owner without a recorded allocation Unavailable).
 */
export const inAnotherSandbox: RuntimeLocation = located('sbx-other', undefined);
