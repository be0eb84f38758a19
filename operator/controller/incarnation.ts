/**
 * Which incarnation of a Sandbox a pass acts for. The controller's Sandbox watch can lag behind its reference
 * and pod watches, so a pass may start from a cached Sandbox that is already gone, its name taken by a new
 * one. Writes to the Sandbox carry its uid (the API server refuses them on any other); the pods and
 * references of a sandbox are found by name, so a deleting pass first reads the Sandbox live.
 */
import { EXCLUSIVITY_FINALIZER } from '../api/names.ts';
import type { SandboxState } from '../api/objects.ts';
import type { LiveSandbox, SandboxIncarnation } from './ports.ts';

export const incarnationOf = (sandbox: SandboxState): SandboxIncarnation => ({
  namespace: sandbox.metadata.namespace,
  name: sandbox.metadata.name,
  uid: sandbox.metadata.uid ?? '',
});

export type Staleness = 'Current' | 'Gone' | 'Replaced' | 'NotDeleting' | 'EraseRecorded';

/**
 * Whether the cached, deleting Sandbox is still the one the API server holds. While it is, and holds the
 * exclusivity finalizer only the operator removes, no other Sandbox can take its name: the writes that follow
 * by name reach only its own pods and references. `eraseRequest` is the erase the cache shows pending: one the
 * API server's status already records as acted on is a cache that lags (`EraseRecorded`), and erasing again
 * would delete the references attached since.
 */
export function stalenessOf(
  cached: SandboxState,
  live: LiveSandbox | undefined,
  eraseRequest?: string,
): Staleness {
  if (live === undefined) return 'Gone';
  if (live.uid !== cached.metadata.uid) return 'Replaced';
  if (!live.deleting) return 'NotDeleting';
  return eraseRequest !== undefined && live.erasedFor === eraseRequest ? 'EraseRecorded' : 'Current';
}

/**
 * Whether the Sandbox under the name decides for its pods, claims and references: it exists, and is live or held by our
 * finalizer. One being deleted without it (stripped, while another finalizer — the garbage collector's
 * `orphan`, `foregroundDeletion` — keeps the object) will never decide: its deletion is no longer ours, and
 * the collector waits on pods that pod protection keeps from it. It is as good as gone.
 */
export function decidesItself(live: LiveSandbox | undefined): live is LiveSandbox {
  return live !== undefined && (!live.deleting || live.finalizers.includes(EXCLUSIVITY_FINALIZER));
}
