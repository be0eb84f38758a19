/**
 * Who this operator is, and whether the pod-protection policy lets it release sandbox pods.
 *
 * The policy trusts a list of users (the admission parameters ConfigMap). An operator run under any other
 * identity (out of cluster, a developer's kubeconfig, a renamed ServiceAccount) gets 403 on every pod DELETE
 * and could never release an exclusive sandbox. So the operator asks the API server who it is
 * (SelfSubjectReview) at start, compares that with the parameters, and says so once, with the fix, instead
 * of retrying forbidden deletes for ever.
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import { KubeRequestError, request } from '../../kube/errors.ts';
import { segment, type JsonClient } from '../../kube/plain-json.ts';

export type AdmissionParamsRef = { readonly namespace: string; readonly name: string };

/** The verdict on this operator's identity; only `NotTrusted` stops it from being ready. */
export type IdentityVerdict =
  | { readonly kind: 'Trusted'; readonly user: string }
  | {
      readonly kind: 'NotTrusted';
      readonly user: string;
      readonly trusted: readonly string[];
      readonly params: AdmissionParamsRef;
    }
  /** No parameters: either no policy is installed (pods unprotected) or every pod DELETE is refused. */
  | { readonly kind: 'ParamsMissing'; readonly user: string; readonly params: AdmissionParamsRef }
  /** The check itself could not be made (no SelfSubjectReview, no read access): said, not fatal. */
  | { readonly kind: 'Unverified'; readonly user: string | undefined; readonly reason: string };

/** Parses `namespace/name`; the flag's validation lives in config.ts. */
export function admissionParamsRef(value: string): AdmissionParamsRef {
  const [namespace = '', name = ''] = value.split('/');
  return { namespace, name };
}

/** Pure: the policy's own reading of `data.operatorUsers` (comma-separated, as its CEL splits it). */
export function judgeIdentity(
  user: string,
  operatorUsers: string | undefined,
  params: AdmissionParamsRef,
): IdentityVerdict {
  if (operatorUsers === undefined) return { kind: 'ParamsMissing', user, params };
  const trusted = operatorUsers.split(',');
  return trusted.includes(user) ? { kind: 'Trusted', user } : { kind: 'NotTrusted', user, trusted, params };
}

/** What a person reads, and does, about a verdict that is not `Trusted`. */
export function identityAdvice(verdict: IdentityVerdict): string | undefined {
  switch (verdict.kind) {
    case 'Trusted':
      return undefined;
    case 'NotTrusted': {
      const { namespace, name } = verdict.params;
      return (
        `this operator runs as "${verdict.user}", but the pod-protection policy lets only ` +
        `[${verdict.trusted.join(', ')}] delete sandbox pods, so no exclusive sandbox can be released. ` +
        `Fix: run the operator under the chart's ServiceAccount, or add the user to the policy's parameters: ` +
        `kubectl patch configmap ${name} -n ${namespace} --type merge ` +
        `-p '{"data":{"operatorUsers":"${[...verdict.trusted, verdict.user].join(',')}"}}'`
      );
    }
    case 'ParamsMissing': {
      const { namespace, name } = verdict.params;
      return (
        `the pod-protection parameters ConfigMap ${namespace}/${name} does not exist: either the policy is not ` +
        `installed (sandbox pods are then unprotected against kubectl delete), or it refuses every sandbox pod ` +
        `deletion, the operator's included. Fix: kubectl apply --server-side -f crds/policies/ (or the chart), ` +
        `or point --admission-params at the right ConfigMap`
      );
    }
    case 'Unverified':
      return `could not verify that the pod-protection policy trusts this operator (${verdict.reason}); releases may be refused`;
  }
}

/**
 * The fix for an admission refusal of this operator's writes, in terms of its own identity: the policy's
 * parameters and the command, when the start-up check found out who it is.
 */
export function admissionFix(verdict: IdentityVerdict, params: AdmissionParamsRef): string | undefined {
  if (verdict.kind === 'NotTrusted' || verdict.kind === 'ParamsMissing') return identityAdvice(verdict);
  if (verdict.kind === 'Trusted' || verdict.user === undefined) return undefined;
  return (
    `this operator runs as "${verdict.user}"; if the pod-protection policy does not trust it, run the operator ` +
    `under the chart's ServiceAccount, or add "${verdict.user}" to data.operatorUsers (comma-separated) of ` +
    `ConfigMap ${params.namespace}/${params.name}`
  );
}

// The few fields the check reads; anything else in the answers is ignored.
const reviewSchema = z.object({
  status: z.object({ userInfo: z.object({ username: z.string().optional() }).optional() }).optional(),
});
const configMapSchema = z.object({ data: z.record(z.string(), z.string()).optional() });

/** Asks the API server who this client is, then reads the policy's parameters. Never throws. */
export async function checkIdentity(json: JsonClient, params: AdmissionParamsRef): Promise<IdentityVerdict> {
  let user: string;
  try {
    const answer = await request('Create', 'selfsubjectreview', () =>
      json({
        method: 'POST',
        path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      }),
    );
    const name = reviewSchema.safeParse(answer).data?.status?.userInfo?.username;
    if (name === undefined)
      return { kind: 'Unverified', user: undefined, reason: 'the review named no user' };
    user = name;
  } catch (error) {
    return { kind: 'Unverified', user: undefined, reason: errorText(error) };
  }
  try {
    const answer = await request('Get', `configmap ${params.namespace}/${params.name}`, () =>
      json({
        method: 'GET',
        path: `/api/v1/namespaces/${segment(params.namespace)}/configmaps/${segment(params.name)}`,
      }),
    );
    const configMap = configMapSchema.safeParse(answer);
    if (!configMap.success)
      return {
        kind: 'Unverified',
        user,
        reason: `configmap ${params.namespace}/${params.name} is unreadable`,
      };
    return judgeIdentity(user, configMap.data.data?.['operatorUsers'] ?? '', params);
  } catch (error) {
    if (error instanceof KubeRequestError && error.notFound) return judgeIdentity(user, undefined, params);
    return { kind: 'Unverified', user, reason: errorText(error) };
  }
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Said once, at start: a person can act on it; the deletion path says it again per sandbox if refused. */
export function reportIdentity(identity: IdentityVerdict, log: Logger): void {
  const advice = identityAdvice(identity);
  const fields = { identity: identity.kind, user: identity.user };
  if (identity.kind === 'Trusted')
    log.info(fields, 'the pod-protection policy trusts this operator to release sandbox pods');
  else if (identity.kind === 'NotTrusted')
    log.error({ ...fields, trusted: identity.trusted }, `not ready: ${advice ?? ''}`);
  else log.warn(fields, advice ?? '');
}
