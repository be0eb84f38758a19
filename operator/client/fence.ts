/**
 * The attach's fence judgement (docs/adr/0003-attach-handshake.md), pure: after the reference is written, the
 * Sandbox as the live read answered it says whether the attach stands.
 *
 * It reads the fence from the raw object, never from a parse of the whole Sandbox (issue 25, item 2): a
 * field this client's schema refuses, or a status value a newer operator wrote, must not hide a
 * deletionTimestamp. It reads exactly the fields the fence lives in — metadata.deletionTimestamp and the
 * cleanup-fence annotation — so an older client keeps attaching to live sandboxes a newer operator
 * describes in words it does not know. When those fields cannot be read, the Sandbox is treated as deleting:
 * an attach refused wrongly costs a retry elsewhere, one accepted wrongly can cost the workspace.
 *
 * Every client applies this judgement; test/conformance/vectors/fence.json holds the cases all of them pass.
 */
import { ANNOTATIONS } from '../api/names.ts';

/** What the live read of the Sandbox answered. */
export type SandboxRead =
  | { readonly kind: 'Gone' }
  /** A success whose body was not JSON at all. */
  | { readonly kind: 'NotJson' }
  | { readonly kind: 'Json'; readonly body: unknown };

export type FenceJudgement =
  | { readonly kind: 'Open' }
  /** The deletion's own fence: `since` is the deletionTimestamp. */
  | { readonly kind: 'Deleting'; readonly since: string }
  /** Automatic cleanup's fence, raised before its consistent LIST: `since` is the annotation's value. */
  | { readonly kind: 'CleanupFenced'; readonly since: string }
  | { readonly kind: 'Gone' }
  /** The fence's fields could not be read; `problem` says which. Treated as deleting. */
  | { readonly kind: 'Unreadable'; readonly problem: string };

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const unreadable = (problem: string): FenceJudgement => ({ kind: 'Unreadable', problem });

export function judgeFence(read: SandboxRead): FenceJudgement {
  if (read.kind === 'Gone') return { kind: 'Gone' };
  if (read.kind === 'NotJson') return unreadable('the answer is not JSON');
  const { body } = read;
  if (!isRecord(body)) return unreadable('the answer is not an object');
  const { metadata } = body;
  if (!isRecord(metadata)) return unreadable('metadata is not an object');
  // JSON null is "not set", as the API server means it.
  const deletion = metadata['deletionTimestamp'] ?? undefined;
  if (deletion !== undefined) {
    if (typeof deletion !== 'string') return unreadable('metadata.deletionTimestamp is not a string');
    return { kind: 'Deleting', since: deletion };
  }
  const annotations = metadata['annotations'] ?? undefined;
  if (annotations === undefined) return { kind: 'Open' };
  if (!isRecord(annotations)) return unreadable('metadata.annotations is not a map');
  const fence = annotations[ANNOTATIONS.cleanupFence] ?? undefined;
  if (fence === undefined) return { kind: 'Open' };
  if (typeof fence !== 'string') return unreadable(`annotation ${ANNOTATIONS.cleanupFence} is not a string`);
  return { kind: 'CleanupFenced', since: fence };
}
