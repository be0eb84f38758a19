/**
 * The agent host's side of the shell reaper (docs/sidecar.md): the client of the sidecar's socket,
 * the gated spawn that registers a shell before it runs (report-to-parent-once is operator/client's).
 * Imports only the contract it shares with the sidecar (../contract), never the sidecar process.
 */
export { createReaperClient, ReaperRequestError } from './client.ts';
export type { EndTurnResult, ReaperClient, ReaperClientOptions, RegisterResult } from './client.ts';
export { spawnRegisteredShell } from './spawn-shell.ts';
export type { SpawnedShell, SpawnShellOptions } from './spawn-shell.ts';
export { MARKER_ENV, markerEnvironment } from '../contract/marker.ts';
