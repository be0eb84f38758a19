/**
 * `claim()`: a session gets a sandbox from a warm pool (or a template) in one call. It creates the SandboxClaim
 * as the caller (so the API server's authorization and audit see the session's user), then watches it until
 * the operator has bound it and the sandbox is Ready, or the deadline passes (claim-wait.ts). The operator's
 * binding is an attach: the returned reference exists from the moment the claim is bound (docs/warm-pools.md,
 * "Claims").
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION, SANDBOX_CLAIM } from '../api/names.ts';
import { request, requestUnlessGone } from '../kube/errors.ts';
import { jsonClientFor } from '../kube/clients.ts';
import { watchStream } from '../kube/watch-stream.ts';
import type { SessionReferenceSpec } from '../api/session-reference.ts';
import { waitForClaim, type ClaimResult, type ClaimWaitPorts } from './claim-wait.ts';
import { CLIENT_USER_AGENT, type ClientOptions } from './options.ts';
import { sandboxClaimPath, sandboxClaimsPath } from './paths.ts';

export type ClaimRequest = Omit<SessionReferenceSpec, 'state' | 'sandbox'> & {
  readonly namespace: string;
  /** The claim's name; absent, the API server generates one from `claim-`. */
  readonly name?: string;
} & (
    | { readonly warmPoolRef: { readonly name: string }; readonly templateRef?: never }
    | { readonly templateRef: { readonly name: string }; readonly warmPoolRef?: never }
  );

export type ClaimOptions = {
  /** How long to wait for the claim to be bound and Ready (default 60 s). */
  readonly deadlineMs?: number;
  /**
   * @deprecated Ignored: the claim is watched, not read at intervals, so Ready is seen as the API server
   * stores it. Kept so that callers which set it still compile.
   */
  readonly pollMs?: number;
};

export { SandboxClaimNotReadyError, type ClaimResult } from './claim-wait.ts';

const DEFAULT_DEADLINE_MS = 60_000;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export class SandboxClaims {
  private readonly ports: ClaimWaitPorts;
  constructor(config: KubeConfig, options: ClientOptions = {}, now: () => number = Date.now) {
    const userAgent = options.userAgent ?? CLIENT_USER_AGENT;
    this.ports = {
      json: jsonClientFor(config, { userAgent }),
      watch: (path, query, signal, onEvent) =>
        watchStream(config, path, query, signal, onEvent, { userAgent }),
      now,
    };
  }

  async claim(req: ClaimRequest, options: ClaimOptions = {}): Promise<ClaimResult> {
    const { namespace, name, ...spec } = req;
    const body = {
      apiVersion: API_VERSION,
      kind: SANDBOX_CLAIM.kind,
      metadata: name === undefined ? { generateName: 'claim-', namespace } : { name, namespace },
      spec,
    };
    const created = await request('Create', `sandboxclaim ${namespace}/${name ?? '(generated)'}`, () =>
      this.ports.json({ method: 'POST', path: sandboxClaimsPath(namespace), body }),
    );
    const answered = isRecord(created) ? created : undefined;
    const metadata = answered?.['metadata'];
    const generated = isRecord(metadata) ? metadata['name'] : undefined;
    const claim = typeof generated === 'string' ? generated : (name ?? '');
    // The create's answer carries the version the watch starts from: nothing after the create is missed.
    return waitForClaim(this.ports, namespace, claim, options.deadlineMs ?? DEFAULT_DEADLINE_MS, answered);
  }

  /** Waits for an existing claim (one made before, e.g. by an earlier call that timed out). */
  async waitUntilReady(namespace: string, claim: string, options: ClaimOptions = {}): Promise<ClaimResult> {
    return waitForClaim(this.ports, namespace, claim, options.deadlineMs ?? DEFAULT_DEADLINE_MS);
  }

  /** Deletes the claim: the operator forgets its reference and deletes its sandbox by the ordinary decision. */
  async release(namespace: string, claim: string): Promise<'Released' | 'AlreadyGone'> {
    const deleted = await requestUnlessGone('Delete', `sandboxclaim ${namespace}/${claim}`, () =>
      this.ports.json({ method: 'DELETE', path: sandboxClaimPath(namespace, claim) }),
    );
    return deleted === undefined ? 'AlreadyGone' : 'Released';
  }
}
