/**
 * The sidecar's one error union: a `kind` per failing step, always with the `cause`. Expected outcomes
 * (a group already gone, a refused signal, a bad request) are values, not these.
 */
export const SIDECAR_ERROR_KINDS = {
  ProcUnavailable: '/proc could not be listed',
  JournalAppendFailed: 'a journal entry could not be written durably',
  JournalReplayFailed: 'the journal could not be read',
  JournalRewriteFailed: 'the compacted journal could not replace the old one',
  ConfigInvalid: 'the sidecar configuration is invalid',
  ListenFailed: 'the local endpoint could not listen on its socket',
  RequestFailed: 'a request to the local endpoint failed',
  KubeWatchFailed: 'the SessionReference watch failed',
  StatusPatchFailed: 'status.shells could not be written',
  EventFailed: 'the Event could not be created',
  SpawnFailed: 'the shell could not be spawned',
  ModeRefused: 'the sandbox pod cannot get the shell reaper in any mode its namespace admits',
} as const;
export type SidecarErrorKind = keyof typeof SIDECAR_ERROR_KINDS;

export class SidecarError extends Error {
  override readonly name = 'SidecarError';
  constructor(
    readonly kind: SidecarErrorKind,
    detail: string,
    options: { readonly cause: unknown },
  ) {
    super(`${SIDECAR_ERROR_KINDS[kind]}: ${detail}`, options);
  }
}

/** The errno code of a Node system error, if it is one. */
export function errnoOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const { code } = error;
  return typeof code === 'string' ? code : undefined;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
