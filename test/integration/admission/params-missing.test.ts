/**
 * Blast radius (issue 25, #9): with the admission parameters ConfigMap gone (an "uninstall" by deleting the
 * release namespace, a restore that missed it), the policies still refuse what touches sandbox pods (fail
 * closed: without parameters nobody is known to be the operator), and leave every other pod alone. A second
 * copy of the policies, bound to this file's namespace only and reading a ConfigMap that does not exist,
 * stands for the installed ones without disturbing the rest of the cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABELS, MANAGED_BY } from '../../../operator/api/names.ts';
import { admissionPolicies, DEFAULT_NAMESPACE } from '../../../operator/api/render-crds.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { eventually, pending } from '../controller/operator.ts';

const namespace = testNamespace('params-gone');
const names = {
  podProtection: 'params-gone-pod-protection.sandbox.agents.dev',
  operatorBounds: 'params-gone-operator-bounds.sandbox.agents.dev',
  podTemplate: 'params-gone-pod-template.sandbox.agents.dev',
  guardProtection: 'params-gone-guard-protection.sandbox.agents.dev',
  budgetProtection: 'params-gone-budget-protection.sandbox.agents.dev',
  claimProtection: 'params-gone-claim-protection.sandbox.agents.dev',
  reaperAccess: 'params-gone-reaper-access.sandbox.agents.dev',
  reaperStatus: 'params-gone-shell-reaper-status.sandbox.agents.dev',
  reaperEvents: 'params-gone-shell-reaper-events.sandbox.agents.dev',
  reaperAccount: "'sandbox-shell-reaper'",
  params: 'no-such-parameters',
};
const scope = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } };

/** The installed policies under other names, every binding scoped to this namespace, reading no parameters. */
const policies = admissionPolicies(DEFAULT_NAMESPACE, names).map((object) =>
  object.kind === 'ValidatingAdmissionPolicyBinding'
    ? { ...object, spec: { ...object.spec, matchResources: scope } }
    : object,
);

const pod = (name: string, labels: Record<string, string> = {}) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels },
    spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] },
  });

const budget = (name: string, labels: Record<string, string>) =>
  JSON.stringify({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace, labels },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: name } } },
  });

beforeAll(async () => {
  await kubectlOk(['apply', '-f', '-'], { input: policies.map((p) => JSON.stringify(p)).join('\n') });
  // In force once a pod that claims the sandbox label is refused for want of parameters.
  await eventually('the parameterless policies in force', async () => {
    const result = await kubectl(['create', '-f', '-'], { input: pod('probe', { [LABELS.sandbox]: 'x' }) });
    if (result.exitCode === 0) await kubectl(['delete', 'pod', 'probe', '-n', namespace, '--wait=false']);
    return result.exitCode !== 0 ? result.stderr : pending({ created: result.stdout });
  });
});
afterAll(async () => {
  for (const object of policies)
    await kubectl(['delete', object.kind.toLowerCase(), object.metadata.name, '--ignore-not-found']);
});

describe('with the admission parameters gone', () => {
  it('leaves a pod that is not a sandbox pod alone: create, relabel, delete', async () => {
    const created = await kubectl(['create', '-f', '-'], { input: pod('unrelated', { app: 'web' }) });
    expect(created.stderr).toBe('');
    expect(created.exitCode).toBe(0);
    await kubectlOk(['label', 'pod', 'unrelated', '-n', namespace, 'app=api', '--overwrite']);
    await kubectlOk(['delete', 'pod', 'unrelated', '-n', namespace, '--wait=false']);
  });

  it('leaves a budget that is not an eviction guard alone: create, change, delete', async () => {
    const created = await kubectl(['create', '-f', '-'], { input: budget('unrelated', { app: 'web' }) });
    expect(created.stderr).toBe('');
    expect(created.exitCode).toBe(0);
    const changed = await kubectl(['label', 'pdb', 'unrelated', '-n', namespace, 'app=api', '--overwrite']);
    expect(changed.stderr).toBe('');
    const deleted = await kubectl(['delete', 'pdb', 'unrelated', '-n', namespace, '--wait=false']);
    expect(deleted.stderr).toBe('');
    expect(deleted.exitCode).toBe(0);
  });

  it('still refuses to delete an eviction guard (fails closed on what is ours)', async () => {
    await kubectlOk(['create', '-f', '-'], {
      input: budget('held-sandbox', { [LABELS.sandbox]: 'held', [LABELS.managedBy]: MANAGED_BY }),
    });
    const result = await kubectl(['delete', 'pdb', 'held-sandbox', '-n', namespace, '--wait=false']);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('budget-protection');
  });

  it('still refuses a pod that carries the sandbox label (fails closed on what may be ours)', async () => {
    const result = await kubectl(['create', '-f', '-'], {
      input: pod('claims-sandbox', { [LABELS.sandbox]: 'any' }),
    });
    expect(result.exitCode).not.toBe(0);
  });
});
