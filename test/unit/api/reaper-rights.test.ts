/**
 * The kubectl-only install narrows the shell reaper's rights as the chart does (issue 26 #4): the policies
 * were the chart's alone (templates/shell-reaper-rbac.yaml), and the kubectl-only install renders the chart
 * with admissionPolicy.enabled=false, so it had none. Both now come from operator/api/reaper-rights.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { renderPolicies } from '../../../operator/api/render-crds.ts';

type Manifest = {
  kind: string;
  metadata: { name: string };
  spec: { paramRef?: unknown; variables?: { name: string; expression: string }[] };
};

const kubectlOnly = () =>
  parseAllDocuments(renderPolicies()['pod-protection.yaml'] ?? '').map((doc) => doc.toJS() as Manifest);

describe('the kubectl-only install’s policies (crds/policies/)', () => {
  it('narrow the shell reaper’s status writes and Events, reading no parameters', () => {
    const reaper = kubectlOnly().filter((o) => o.metadata.name.startsWith('sandbox-shell-reaper-'));
    expect(reaper.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ValidatingAdmissionPolicy/sandbox-shell-reaper-status.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sandbox-shell-reaper-status.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/sandbox-shell-reaper-events.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/sandbox-shell-reaper-events.sandbox.agents.dev',
    ]);
    for (const binding of reaper.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding'))
      expect(binding.spec).not.toHaveProperty('paramRef');
    // The operator's default --sidecar-service-account, always narrowed.
    for (const policy of reaper.filter((o) => o.kind === 'ValidatingAdmissionPolicy'))
      expect(policy.spec.variables?.find((v) => v.name === 'reaperAccount')?.expression).toBe(
        "'sandbox-shell-reaper'",
      );
  });
});
