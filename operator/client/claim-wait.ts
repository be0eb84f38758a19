/**
 * The wait of `claim()`: the I/O that claim-watch.ts decides, and the deadline. It watches the one claim
 * (`fieldSelector=metadata.name=<claim>`) from the version it last saw it at, so the host hears Ready as the
 * API server stores it, not a poll later; each watch's server timeout and the client's own stop end it at the
 * deadline, which fails with SandboxClaimNotReadyError saying what the claim's conditions said last.
 */
import { KubeRequestError, requestUnlessGone } from '../kube/errors.ts';
import type { JsonClient } from '../kube/plain-json.ts';
import type { WatchEnd, WatchQuery } from '../kube/watch-stream.ts';
import type { ClaimLaunchType } from './claim-readiness.ts';
import { hear, UNSEEN_CLAIM, type ClaimHeard, type ClaimWatch, type ClaimWatchStep } from './claim-watch.ts';
import { sandboxClaimPath, sandboxClaimsPath } from './paths.ts';

export type ClaimResult = {
  /** The SandboxClaim's name: delete it to release the sandbox (release()). */
  readonly claim: string;
  readonly sandbox: string;
  readonly reference: string;
  readonly launchType: ClaimLaunchType;
};

/** The claim was not bound and Ready by the deadline, or was deleted meanwhile; it is left as it is. */
export class SandboxClaimNotReadyError extends Error {
  readonly kind = 'SandboxClaimNotReady';
  constructor(
    readonly namespace: string,
    readonly claim: string,
    readonly reason: 'Deadline' | 'Deleting' | 'Gone',
    readonly deadlineMs: number,
    /** What its conditions said last. */
    readonly seen: string,
    /** At the deadline: the failure of the last watch, when it failed rather than ended. */
    options?: ErrorOptions,
  ) {
    super(
      reason === 'Deadline'
        ? `sandboxclaim ${namespace}/${claim} was not bound and Ready within ${deadlineMs} ms (last seen: ${seen}); the claim is kept, delete it to give it up`
        : `sandboxclaim ${namespace}/${claim} ${reason === 'Gone' ? 'is gone' : 'is being deleted'}; it will not become Ready`,
      options,
    );
    this.name = 'SandboxClaimNotReadyError';
  }
}

/** One watch request (operator/kube/watch-stream.ts, bound to the client's kubeconfig and User-Agent). */
export type WatchPort = (
  path: string,
  query: WatchQuery & { timeoutSeconds: number },
  signal: AbortSignal,
  onEvent: (type: string, object: unknown) => void,
) => Promise<WatchEnd>;

export type ClaimWaitPorts = {
  readonly json: JsonClient;
  readonly watch: WatchPort;
  readonly now: () => number;
};

function heardOf(end: WatchEnd): ClaimHeard {
  switch (end.kind) {
    case 'Closed':
      return end;
    case 'Gone':
      return { kind: 'Expired' };
    case 'Failed':
      return { kind: 'Failed', status: end.status ?? null };
  }
}

/**
 * Waits until the claim is bound and Ready. `created` is the create's answer (its version is where the first
 * watch starts); without it the claim is read first.
 */
export async function waitForClaim(
  ports: ClaimWaitPorts,
  namespace: string,
  claim: string,
  deadlineMs: number,
  created?: object,
): Promise<ClaimResult> {
  const deadline = ports.now() + deadlineMs;
  const target = `sandboxclaim ${namespace}/${claim}`;
  const read = async (): Promise<ClaimHeard> => ({
    kind: 'Read',
    body: await requestUnlessGone('Get', target, () =>
      ports.json({ method: 'GET', path: sandboxClaimPath(namespace, claim) }),
    ),
  });
  let step = hear(UNSEEN_CLAIM, created === undefined ? await read() : { kind: 'Read', body: created });
  /** The last watch's failure, while nothing was heard since: the cause of a refusal or of the deadline. */
  let failure: unknown;
  for (;;) {
    const { watch, next } = step;
    switch (next.kind) {
      case 'Ready':
        return { claim, sandbox: next.sandbox, reference: next.reference, launchType: next.launchType };
      case 'Ended':
        throw new SandboxClaimNotReadyError(namespace, claim, next.reason, deadlineMs, watch.seen);
      case 'Refused':
        throw new KubeRequestError('Watch', target, next.status, { cause: failure });
      case 'Listen':
      case 'Watch':
      case 'Read': {
        const pause = next.kind === 'Listen' ? 0 : next.afterMs;
        if (pause > 0) await sleep(Math.min(pause, deadline - ports.now()));
        const left = deadline - ports.now();
        if (left <= 0)
          throw new SandboxClaimNotReadyError(
            namespace,
            claim,
            'Deadline',
            deadlineMs,
            watch.seen,
            failure === undefined ? undefined : { cause: failure },
          );
        if (next.kind === 'Read') {
          step = hear(watch, await read());
          failure = undefined;
        } else {
          const watched = await watchOnce(ports.watch, namespace, claim, watch, left);
          step = watched.step;
          failure = watched.failure;
        }
      }
    }
  }
}

/** One watch of the claim until it decides something, ends, or the deadline (`leftMs`) stops it. */
async function watchOnce(
  watch: WatchPort,
  namespace: string,
  claim: string,
  from: ClaimWatch,
  leftMs: number,
): Promise<{ step: ClaimWatchStep; failure: unknown }> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), leftMs);
  let current = from;
  // A holder, not a `let`: the event handler sets it while the watch is awaited.
  const heard: { decided?: ClaimWatchStep } = {};
  try {
    const query = {
      fieldSelector: `metadata.name=${claim}`,
      resourceVersion: from.resourceVersion,
      allowWatchBookmarks: true,
      // The server ends it by the deadline too (whole seconds, at least one); the client's stop is exact.
      timeoutSeconds: Math.max(1, Math.ceil(leftMs / 1000)),
    };
    const end = await watch(sandboxClaimsPath(namespace), query, stop.signal, (type, object) => {
      if (heard.decided !== undefined) return;
      const step = hear(current, { kind: 'Event', type, object });
      current = step.watch;
      if (step.next.kind === 'Listen') return;
      heard.decided = step;
      stop.abort();
    });
    if (heard.decided !== undefined) return { step: heard.decided, failure: undefined };
    return { step: hear(current, heardOf(end)), failure: end.kind === 'Failed' ? end.error : undefined };
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
