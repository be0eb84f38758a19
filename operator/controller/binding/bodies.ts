/**
 * The objects a binding creates, pure: the claim's SessionReference (the name every client derives,
 * operator/client/names.ts, so a host that attaches the same session finds it) and a cold Sandbox made from
 * the template, labelled with its claim and holding the exclusivity finalizer from birth, owned by no pool.
 */
import {
  ANNOTATIONS,
  API_VERSION,
  EXCLUSIVITY_FINALIZER,
  LABELS,
  SANDBOX,
  SESSION_REFERENCE,
} from '../../api/names.ts';
import { sessionReferenceName } from '../../client/names.ts';
import type { SessionReferenceSpec } from '../../api/session-reference.ts';
import type { ClaimRecord } from './records.ts';
import type { TemplateRead } from './ports.ts';

/** The claim's session as a reference spec (the claim's fields have the reference's schemas). */
export function referenceSpecOf(claim: ClaimRecord, sandbox: string): SessionReferenceSpec {
  const { session, worktree, route, role, parentSession } = claim.spec;
  return {
    sandbox,
    session,
    ...(worktree === undefined ? {} : { worktree }),
    route,
    role: role as SessionReferenceSpec['role'],
    ...(parentSession === undefined ? {} : { parentSession }),
    state: 'Attached',
  };
}

export function referenceBody(claim: ClaimRecord, sandbox: string) {
  return {
    apiVersion: API_VERSION,
    kind: SESSION_REFERENCE.kind,
    metadata: {
      name: sessionReferenceName(sandbox, claim.spec.session),
      namespace: claim.namespace,
      labels: { [LABELS.sandboxClaim]: claim.name },
    },
    spec: referenceSpecOf(claim, sandbox),
  };
}

/** Sandbox names are DNS labels: the claim's name, cut to leave room for `-` and the suffix. */
export const coldSandboxName = (claim: string, suffix: string) =>
  `${claim.slice(0, 62 - suffix.length).replace(/-+$/, '')}-${suffix}`;

export function coldSandboxBody(
  claim: ClaimRecord,
  templateName: string,
  template: TemplateRead,
  suffix: string,
) {
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX.kind,
    metadata: {
      name: coldSandboxName(claim.name, suffix),
      namespace: claim.namespace,
      labels: { [LABELS.sandboxClaim]: claim.name, [LABELS.template]: templateName },
      annotations: { [ANNOTATIONS.templateGeneration]: String(template.generation) },
      // Born holding its deletion for the decision: it is claimed (referenced) from its first instant, and the
      // claim's release may delete it before the Sandbox reconciler's first turn adds the finalizer; without
      // it the API server would remove the Sandbox at once, with no decision, though another session had
      // attached meanwhile (the soak, seed 20261228).
      finalizers: [EXCLUSIVITY_FINALIZER],
    },
    // The template's blueprint is the Sandbox spec's fields but worktree, provider and operatingMode: a copy
    // is a complete spec, so the sandbox depends on the template no more than a pool sandbox does.
    spec: { ...template.spec },
  };
}
