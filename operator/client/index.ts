/**
 * `@sandbox-operator/client` (the package is clients/typescript): what an agent host (platform code) calls to
 * attach, detach, forget and prune the SessionReferences of its sessions. The package's public entry point;
 * docs/client.md documents each call, its guarantees and its errors. Everything else in the package is internal.
 */
export { KubeConfig } from '@kubernetes/client-node';
export {
  SandboxDeletingError,
  SessionReferences,
  type AttachRequest,
  type FenceReason,
  type ForgetResult,
  type Withdrawal,
} from './session-references.ts';
export { SessionReferenceConflictError } from './conflict-error.ts';
export {
  SandboxClaimNotReadyError,
  SandboxClaims,
  type ClaimOptions,
  type ClaimRequest,
  type ClaimResult,
} from './sandbox-claims.ts';
export type { ClaimLaunchType } from './claim-readiness.ts';
export { SandboxNotReadyError, SandboxResumeForbiddenError, type AttachOptions } from './resumption.ts';
export type { FixedField } from './reattach.ts';
export { sessionReferenceName, reportedAnnotation } from './names.ts';
export { CLIENT_USER_AGENT, type ClientOptions } from './options.ts';
export {
  CompletionReports,
  type ReportOutcome,
  type ReportRequest,
  type TurnRecord,
} from './completion-reports.ts';
export { KubeRequestError } from '../kube/errors.ts';
export type { SessionReferenceSpec, Turn } from '../api/session-reference.ts';
export { API_VERSION, GROUP, SANDBOX, SESSION_REFERENCE } from '../api/names.ts';
