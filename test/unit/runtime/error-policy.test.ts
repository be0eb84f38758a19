import { describe, expect, it } from 'vitest';
import { KubeRequestError } from '../../../operator/kube/errors.ts';
import {
  controllerErrorOf,
  errorPolicy,
  LeaseLostError,
  MisconfigurationError,
} from '../../../operator/runtime/error-policy.ts';

const kube = (status: number, step: 'Patch' | 'PatchFinalizers' = 'Patch') =>
  new KubeRequestError(step, 'ns/sbx', status, { cause: new Error(`HTTP ${status}`) });

/** A 403 as client-node reports it: the API server's Status in the body. */
const forbidden = (message: string, step: 'Delete' | 'Create' | 'List' = 'Delete') =>
  new KubeRequestError(step, 'ns/sbx-0', 403, {
    cause: { code: 403, body: JSON.stringify({ kind: 'Status', reason: 'Forbidden', message }) },
  });

describe('the error policy', () => {
  // The runner logs each decision's `why` at its `level`: the whole decision is what an operator reads.
  it('retries a stale write quietly, from fresh state', () => {
    for (const error of [kube(409), kube(422, 'PatchFinalizers')])
      expect(errorPolicy(controllerErrorOf(error))).toEqual({
        kind: 'RetryWithBackoff',
        level: 'info',
        why: 'stale write refused by the API server; retrying from fresh state',
      });
  });

  // The delete review (controller/delete-review.ts) answers 409 so that its refusal of the cleanup's DELETE reads as
  // a race lost, retried from fresh state — with the 400 a webhook sends by default it would await a fix for ever.
  it('retries the delete review’s refusal (409 from an admission webhook) as a stale write', () => {
    const message =
      'admission webhook "sandbox-deletes.operator-review.sandbox.agents.dev" denied the request: sandbox ns/sbx ' +
      'still has 1 SessionReference(s) (board-main)';
    const refused = new KubeRequestError('Delete', 'sandbox ns/sbx', 409, {
      cause: { code: 409, body: JSON.stringify({ kind: 'Status', reason: 'Conflict', code: 409, message }) },
    });
    expect(refused.admissionDenied).toBe(false);
    expect(errorPolicy(controllerErrorOf(refused))).toMatchObject({
      kind: 'RetryWithBackoff',
      level: 'info',
    });
  });

  it('retries any other failed request with backoff, as a warning', () => {
    for (const error of [kube(500), kube(422)])
      expect(errorPolicy(controllerErrorOf(error))).toEqual({
        kind: 'RetryWithBackoff',
        level: 'warn',
        why: 'reconcile failed; retrying with backoff',
      });
  });

  it.each([new TypeError('x is undefined'), new RangeError('bad length'), new ReferenceError('y')])(
    'takes a %s for our own bug: retried, logged as an error',
    (thrown) => {
      const error = controllerErrorOf(thrown);
      expect(error).toEqual({ kind: 'Bug', error: thrown });
      expect(errorPolicy(error)).toEqual({
        kind: 'RetryWithBackoff',
        level: 'error',
        why: 'reconcile hit a programming error; retrying with backoff',
      });
    },
  );

  it('stops on a lost lease, which keeps the renew failure as its cause', () => {
    const renew = kube(503);
    const lost = new LeaseLostError('ns/lease', 10_000, { cause: renew });
    expect(lost.cause).toBe(renew);
    expect(lost).toMatchObject({ kind: 'LeaseLost', name: 'LeaseLostError', lease: 'ns/lease' });
    expect(lost.message).toBe('leader election lost: lease ns/lease not renewed within 10000 ms');
    expect(controllerErrorOf(lost)).toEqual({ kind: 'LeaseLost', error: lost });
    expect(errorPolicy(controllerErrorOf(lost))).toEqual({
      kind: 'Terminal',
      why: 'leadership lost; this replica stops reconciling',
    });
  });

  it('awaits a fix for a MisconfigurationError thrown by domain code, with what a person must change', () => {
    const misconfiguration = {
      reason: 'NoShellReaperMode',
      refused: 'no shell reaper mode fits the pod template',
      fix: 'allow CAP_KILL or set spec.shellReaper.mode',
    };
    const thrown = new MisconfigurationError(misconfiguration, { cause: 'the template' });
    expect(thrown).toMatchObject({
      kind: 'Misconfigured',
      name: 'MisconfigurationError',
      cause: 'the template',
    });
    expect(thrown.message).toBe(
      'no shell reaper mode fits the pod template; fix: allow CAP_KILL or set spec.shellReaper.mode',
    );
    const error = controllerErrorOf(thrown);
    expect(error).toEqual({ kind: 'Misconfigured', error: thrown, misconfiguration });
    expect(errorPolicy(error)).toEqual({
      kind: 'AwaitFix',
      why: 'reconcile refused by a setting only a person can change; not retried until it changes',
      misconfiguration,
    });
  });

  it('awaits a fix for an RBAC 403: which identity lacks which permission, and the command that checks it', () => {
    const refused = forbidden(
      'pods "sbx-0" is forbidden: User "system:serviceaccount:team-a:agent" cannot delete resource "pods" in API group "" in the namespace "team-a"',
    );
    const decision = errorPolicy(controllerErrorOf(refused));
    expect(decision).toMatchObject({ kind: 'AwaitFix', misconfiguration: { reason: 'RBACForbidden' } });
    const fix = decision.kind === 'AwaitFix' ? decision.misconfiguration.fix : '';
    expect(fix).toContain('grant system:serviceaccount:team-a:agent "delete" on pods in namespace team-a');
    expect(fix).toContain("the chart's ClusterRole");
    expect(fix).toContain('kubectl auth can-i delete pods -n team-a --as system:serviceaccount:team-a:agent');
  });

  it('names the API group of a custom resource and a cluster-scoped refusal', () => {
    const refused = forbidden(
      'sandboxes.sandbox.agents.dev is forbidden: User "dev" cannot list resource "sandboxes" in API group "sandbox.agents.dev" at the cluster scope',
    );
    const decision = errorPolicy(controllerErrorOf(refused));
    const fix = decision.kind === 'AwaitFix' ? decision.misconfiguration.fix : '';
    expect(fix).toContain('grant dev "list" on sandboxes.sandbox.agents.dev cluster-wide');
    expect(fix).toContain('kubectl auth can-i list sandboxes.sandbox.agents.dev --as dev');
  });

  it('awaits a fix for an admission policy refusal, naming the policy, its message and the identity fix', () => {
    const refused = forbidden(
      "pods \"sbx-0\" is forbidden: ValidatingAdmissionPolicy 'sandbox-pod-protection' with binding 'sandbox-pod-protection' denied request: pod sbx-0: only the sandbox operator creates pods owned by a Sandbox (metadata.ownerReferences)",
      'Create',
    );
    const decision = errorPolicy(controllerErrorOf(refused));
    expect(decision).toMatchObject({ kind: 'AwaitFix', misconfiguration: { reason: 'AdmissionRefused' } });
    const fix = decision.kind === 'AwaitFix' ? decision.misconfiguration.fix : '';
    expect(fix).toContain(
      'the admission policy sandbox-pod-protection refused it (pod sbx-0: only the sandbox',
    );
    expect(fix).toContain('data.operatorUsers');
  });

  it('awaits a fix for a Pod Security refusal, and for any other 403', () => {
    const podSecurity = forbidden(
      'pods "sbx-0" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true',
      'Create',
    );
    expect(errorPolicy(controllerErrorOf(podSecurity))).toMatchObject({
      kind: 'AwaitFix',
      misconfiguration: { reason: 'PodSecurityRefused', fix: expect.stringContaining('restricted:latest') },
    });
    expect(errorPolicy(controllerErrorOf(forbidden('forbidden by a webhook')))).toMatchObject({
      kind: 'AwaitFix',
      misconfiguration: { reason: 'Forbidden' },
    });
  });

  it('awaits a fix for an admission denial whatever its status: a policy without a reason (422), a webhook (400)', () => {
    const denied = (status: number, message: string) =>
      new KubeRequestError('Create', 'poddisruptionbudget ns/sbx-sandbox', status, {
        cause: { code: status, body: JSON.stringify({ kind: 'Status', message }) },
      });
    const policy = denied(
      422,
      "poddisruptionbudgets.policy \"sbx-sandbox\" is invalid: : ValidatingAdmissionPolicy 'no-zero-budgets' with binding 'no-zero-budgets' denied request: budgets must allow a disruption",
    );
    const webhook = denied(
      400,
      'admission webhook "validation.gatekeeper.sh" denied the request: [pdb-no-zero] maxUnavailable of 0 is not allowed',
    );
    expect(errorPolicy(controllerErrorOf(policy))).toMatchObject({
      kind: 'AwaitFix',
      misconfiguration: { reason: 'AdmissionRefused', fix: expect.stringContaining('no-zero-budgets') },
    });
    expect(errorPolicy(controllerErrorOf(webhook))).toMatchObject({
      kind: 'AwaitFix',
      misconfiguration: {
        reason: 'AdmissionRefused',
        fix: expect.stringContaining('validation.gatekeeper.sh refused it ([pdb-no-zero] maxUnavailable'),
      },
    });
    // An invalid request that no admission denied stays a failed request.
    expect(
      errorPolicy(controllerErrorOf(denied(422, 'Sandbox "x" is invalid: spec.worktree'))),
    ).toMatchObject({
      kind: 'RetryWithBackoff',
    });
  });

  it('still retries a create refused because the namespace is terminating: an outcome, not a setting', () => {
    const terminating = forbidden(
      'pods "sbx-0" is forbidden: unable to create new content in namespace team-a because it is being terminated',
      'Create',
    );
    expect(controllerErrorOf(terminating)).toEqual({ kind: 'KubeRequestFailed', error: terminating });
    expect(errorPolicy(controllerErrorOf(terminating))).toMatchObject({
      kind: 'RetryWithBackoff',
      level: 'warn',
    });
  });

  it('keeps anything else thrown as Unexpected and retries it', () => {
    const error = controllerErrorOf('a string');
    expect(error).toEqual({ kind: 'Unexpected', error: 'a string' });
    expect(errorPolicy(error)).toEqual({
      kind: 'RetryWithBackoff',
      level: 'warn',
      why: 'reconcile failed; retrying with backoff',
    });
  });
});
