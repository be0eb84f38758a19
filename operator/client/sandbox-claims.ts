/**
 * `claim()`: a session gets a sandbox from a warm pool (or a template) in one call. It creates the SandboxClaim
 * as the caller (so the API server's authorization and audit see the session's user), then waits until the
 * operator has bound it and the sandbox is Ready, or the deadline passes. The operator's binding is an attach:
 * the returned reference exists from the moment the claim is bound (docs/warm-pools.md, "Claims").
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { API_VERSION } from '../api/names.ts';
import { request, requestUnlessGone } from '../kube/errors.ts';
import { jsonClientFor } from '../kube/clients.ts';
import type { JsonClient } from '../kube/plain-json.ts';
import type { SessionReferenceSpec } from '../api/session-reference.ts';
import { judgeClaim, type ClaimLaunchType } from './claim-readiness.ts';
import { CLIENT_USER_AGENT, type ClientOptions } from './options.ts';
import { SANDBOX_CLAIM_KIND, sandboxClaimPath, sandboxClaimsPath } from './paths.ts';

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
  /** The longest pause between two reads of the claim (default 500 ms; the first reads come sooner). */
  readonly pollMs?: number;
};

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
  ) {
    super(
      reason === 'Deadline'
        ? `sandboxclaim ${namespace}/${claim} was not bound and Ready within ${deadlineMs} ms (last seen: ${seen}); the claim is kept, delete it to give it up`
        : `sandboxclaim ${namespace}/${claim} ${reason === 'Gone' ? 'is gone' : 'is being deleted'}; it will not become Ready`,
    );
    this.name = 'SandboxClaimNotReadyError';
  }
}

const DEFAULT_DEADLINE_MS = 60_000;
const FIRST_POLL_MS = 20;

export class SandboxClaims {
  private readonly json: JsonClient;
  constructor(
    config: KubeConfig,
    options: ClientOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.json = jsonClientFor(config, { userAgent: options.userAgent ?? CLIENT_USER_AGENT });
  }

  async claim(req: ClaimRequest, options: ClaimOptions = {}): Promise<ClaimResult> {
    const { namespace, name, ...spec } = req;
    const body = {
      apiVersion: API_VERSION,
      kind: SANDBOX_CLAIM_KIND,
      metadata: name === undefined ? { generateName: 'claim-', namespace } : { name, namespace },
      spec,
    };
    const created = (await request('Create', `sandboxclaim ${namespace}/${name ?? '(generated)'}`, () =>
      this.json({ method: 'POST', path: sandboxClaimsPath(namespace), body }),
    )) as { metadata?: { name?: string } };
    const claim = created.metadata?.name ?? name ?? '';
    return this.waitUntilReady(namespace, claim, options);
  }

  /** Waits for an existing claim (one made before, e.g. by an earlier call that timed out). */
  async waitUntilReady(namespace: string, claim: string, options: ClaimOptions = {}): Promise<ClaimResult> {
    const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    const pollMs = options.pollMs ?? 500;
    const deadline = this.now() + deadlineMs;
    let pause = FIRST_POLL_MS;
    let seen = 'not read yet';
    for (;;) {
      const read: unknown = await requestUnlessGone('Get', `sandboxclaim ${namespace}/${claim}`, () =>
        this.json({ method: 'GET', path: sandboxClaimPath(namespace, claim) }),
      );
      const judgement = judgeClaim(read);
      if (judgement.kind === 'Ready') {
        const { sandbox, reference, launchType } = judgement;
        return { claim, sandbox, reference, launchType };
      }
      if (judgement.kind !== 'Waiting')
        throw new SandboxClaimNotReadyError(namespace, claim, judgement.kind, deadlineMs, seen);
      seen = judgement.seen;
      const left = deadline - this.now();
      if (left <= 0) throw new SandboxClaimNotReadyError(namespace, claim, 'Deadline', deadlineMs, seen);
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
      pause = Math.min(pause * 2, pollMs);
    }
  }

  /** Deletes the claim: the operator forgets its reference and deletes its sandbox by the ordinary decision. */
  async release(namespace: string, claim: string): Promise<'Released' | 'AlreadyGone'> {
    const deleted = await requestUnlessGone('Delete', `sandboxclaim ${namespace}/${claim}`, () =>
      this.json({ method: 'DELETE', path: sandboxClaimPath(namespace, claim) }),
    );
    return deleted === undefined ? 'AlreadyGone' : 'Released';
  }
}
