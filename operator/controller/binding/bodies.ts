/**
 * The objects a binding creates, pure: the claim's SessionReference (the name every client derives,
 * operator/client/names.ts, so a host that attaches the same session finds it) and a cold Sandbox made from
 * the template, labelled with its claim from birth and owned by no pool.
 */
import { API_VERSION, SANDBOX, SESSION_REFERENCE } from '../../api/names.ts';
import { sessionReferenceName } from '../../client/names.ts';
import type { SessionReferenceSpec } from '../../api/session-reference.ts';
import type { ClaimRecord } from './records.ts';
import type { TemplateRead } from './ports.ts';
import { SANDBOX_CLAIM_LABEL, TEMPLATE_GENERATION_ANNOTATION, TEMPLATE_LABEL } from './vocabulary.ts';

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
      labels: { [SANDBOX_CLAIM_LABEL]: claim.name },
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
      labels: { [SANDBOX_CLAIM_LABEL]: claim.name, [TEMPLATE_LABEL]: templateName },
      annotations: { [TEMPLATE_GENERATION_ANNOTATION]: String(template.generation) },
    },
    // The template's blueprint is the Sandbox spec's fields but worktree, provider and operatingMode: a copy
    // is a complete spec, so the sandbox depends on the template no more than a pool sandbox does.
    spec: { ...template.spec },
  };
}
