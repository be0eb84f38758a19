/**
 * What `claim()` does with each thing it hears about its one SandboxClaim, pure: the answer of its create or of
 * a read, each event of its watch (`fieldSelector=metadata.name=<claim>`) and how each watch ended. Every
 * client decides alike (test/conformance/vectors/claim-watch.json); the shells only do the I/O and keep the
 * deadline.
 *
 * - It watches from the version it last saw the claim at (the create's answer first), so no change between
 *   the create and the watch, nor between two watches, is missed.
 * - A watch that ends (the server's timeout) is opened again from that version; one that lost its connection
 *   too. One the server expired (410 Gone) or failed (429, 5xx, an ERROR event) is replaced by a read of the
 *   claim and a watch from the version read: the old version may no longer mean anything. Watches that keep
 *   ending without an event are opened again after growing pauses (0, then 100 ms doubling to 1 s).
 * - Any other refusal of the watch (400, 401, 403, 404, …) is the caller's to fix: no retry makes it pass.
 */
import { judgeClaim, type ClaimLaunchType } from './claim-readiness.ts';

export type ClaimWatch = {
  /** The version to watch from: the last the claim was seen at (its create, a read, an event, a bookmark). */
  readonly resourceVersion: string;
  /** What its conditions said last, for the deadline's error. */
  readonly seen: string;
  /** Watches in a row that ended without an event, for the pause before the next. */
  readonly failures: number;
};

export const UNSEEN_CLAIM: ClaimWatch = { resourceVersion: '', seen: 'not read yet', failures: 0 };

export type ClaimHeard =
  /** The create's or a read's answer; absent: the read found no claim (404). */
  | { readonly kind: 'Read'; readonly body?: unknown }
  | { readonly kind: 'Event'; readonly type: string; readonly object: unknown }
  /** The watch ended as a watch ends: the server's timeout, or the client's own stop. */
  | { readonly kind: 'Closed' }
  /** 410 Gone: the version watched from is no longer in the server's window. */
  | { readonly kind: 'Expired' }
  /** Any other failure: the HTTP status, or null when no answer came (the connection failed). */
  | { readonly kind: 'Failed'; readonly status: number | null };

export type ClaimNext =
  | {
      readonly kind: 'Ready';
      readonly sandbox: string;
      readonly reference: string;
      readonly launchType: ClaimLaunchType;
    }
  | { readonly kind: 'Ended'; readonly reason: 'Deleting' | 'Gone' }
  /** Keep reading the open watch. */
  | { readonly kind: 'Listen' }
  /** Open a watch from `resourceVersion` after `afterMs`. */
  | { readonly kind: 'Watch'; readonly resourceVersion: string; readonly afterMs: number }
  /** Read the claim after `afterMs`, then go on from what it says. */
  | { readonly kind: 'Read'; readonly afterMs: number }
  /** The watch was refused with `status`: fail with it. */
  | { readonly kind: 'Refused'; readonly status: number };

export type ClaimWatchStep = { readonly watch: ClaimWatch; readonly next: ClaimNext };

const FIRST_PAUSE_MS = 100;
const LONGEST_PAUSE_MS = 1_000;

/** The pause before the next watch or read: none after one watch ended alone, then growing. */
export const pauseAfter = (failures: number): number =>
  failures <= 1 ? 0 : Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** (failures - 2));

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function versionOf(object: unknown): string | undefined {
  const metadata = isRecord(object) ? object['metadata'] : undefined;
  const version = isRecord(metadata) ? metadata['resourceVersion'] : undefined;
  return typeof version === 'string' && version !== '' ? version : undefined;
}

/** What the claim as read or as an event carries says: Ready, ended, or still waiting (then `waiting`). */
function judged(watch: ClaimWatch, body: unknown, waiting: (watch: ClaimWatch) => ClaimNext): ClaimWatchStep {
  const judgement = judgeClaim(body);
  switch (judgement.kind) {
    case 'Ready':
      return { watch, next: judgement };
    case 'Deleting':
    case 'Gone':
      return { watch, next: { kind: 'Ended', reason: judgement.kind } };
    case 'Waiting': {
      const seen = {
        ...watch,
        resourceVersion: versionOf(body) ?? watch.resourceVersion,
        seen: judgement.seen,
      };
      return { watch: seen, next: waiting(seen) };
    }
  }
}

/** One watch more ended without an event: counted, with the pause it earns before what comes next. */
function counted(watch: ClaimWatch): { readonly watch: ClaimWatch; readonly afterMs: number } {
  const failures = watch.failures + 1;
  return { watch: { ...watch, failures }, afterMs: pauseAfter(failures) };
}

/** Watched again from the last version seen. */
function rewatched(watch: ClaimWatch): ClaimWatchStep {
  const { watch: next, afterMs } = counted(watch);
  return { watch: next, next: { kind: 'Watch', resourceVersion: next.resourceVersion, afterMs } };
}

/** Read again: the version watched from may no longer mean anything. */
function reread(watch: ClaimWatch): ClaimWatchStep {
  const { watch: next, afterMs } = counted(watch);
  return { watch: next, next: { kind: 'Read', afterMs } };
}

/** A failure the server answered: expired, busy or broken, it is read again; anything else is a refusal. */
function failed(watch: ClaimWatch, status: number | null): ClaimWatchStep {
  if (status === null) return rewatched(watch);
  if (status === 410 || status === 429 || status >= 500) return reread(watch);
  return { watch, next: { kind: 'Refused', status } };
}

function event(watch: ClaimWatch, type: string, object: unknown): ClaimWatchStep {
  switch (type) {
    case 'ADDED':
    case 'MODIFIED':
      return judged({ ...watch, failures: 0 }, object, () => ({ kind: 'Listen' }));
    case 'DELETED':
      return { watch, next: { kind: 'Ended', reason: 'Gone' } };
    case 'BOOKMARK':
      return {
        watch: { ...watch, failures: 0, resourceVersion: versionOf(object) ?? watch.resourceVersion },
        next: { kind: 'Listen' },
      };
    case 'ERROR': {
      // A Status, and the server ends the watch after it: judged by its code, as an answer's status is.
      const code = isRecord(object) ? object['code'] : undefined;
      return failed(watch, typeof code === 'number' ? code : 500);
    }
    default:
      return { watch, next: { kind: 'Listen' } };
  }
}

export function hear(watch: ClaimWatch, heard: ClaimHeard): ClaimWatchStep {
  switch (heard.kind) {
    case 'Read':
      return judged(watch, heard.body, ({ resourceVersion }) => ({
        kind: 'Watch',
        resourceVersion,
        afterMs: 0,
      }));
    case 'Event':
      return event(watch, heard.type, heard.object);
    case 'Closed':
      return rewatched(watch);
    case 'Expired':
      return failed(watch, 410);
    case 'Failed':
      return failed(watch, heard.status);
  }
}
