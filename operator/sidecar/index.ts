/**
 * The shell reaper sidecar (issue 5, seed 002): in each sandbox pod it ends a subagent session's shell
 * process groups when that session's turn completes, drops their pending notices, and records what it
 * did. Lives here: /proc parsing, identity proofs, the retire state machine, the journal, the local
 * endpoint and its client, the SessionReference watch. Must not: rules about exclusivity.
 * Contract and privilege model: docs/sidecar.md.
 */
export { createReaperClient, ReaperRequestError, spawnRegisteredShell } from './client.ts';
export type {
  EndTurnResult,
  ReaperClient,
  RegisterResult,
  SpawnedShell,
  SpawnShellOptions,
} from './client.ts';
export { decideCompletionReport, IS_HOST_NOTICE, reportKey } from './completion-report.ts';
export type { CompletionFacts, CompletionReport } from './completion-report.ts';
export { CONFIG_DEFAULTS, CONFIG_ENV, loadConfig } from './config.ts';
export type { SidecarConfig } from './config.ts';
export { REAPER_CONTAINER, REAPER_PATHS, REAPER_VOLUMES, reaperInjection } from './injection.ts';
export type { ReaperInjection, ReaperInjectionInput } from './injection.ts';
export { MARKER_ENV, markerEnvironment } from './marker.ts';
export { startSidecar } from './sidecar-app.ts';
export type { SidecarApp } from './sidecar-app.ts';
