// The per-namespace quota docs/operations.md tells an administrator to set (issue 26, #5): an object-count
// ResourceQuota on Sandboxes bounds how many one tenant's namespace holds; the one past it is refused by
// the API server, naming the quota.
import { describe, expect, it } from 'vitest';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { sandbox } from './examples.ts';

const ns = testNamespace('sandbox-quota');
const QUOTA = 'count/sandboxes.sandbox.agents.dev';

describe('a ResourceQuota on Sandboxes', () => {
  it("refuses the Sandbox past the namespace's count", async () => {
    const quota = {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'sandboxes', namespace: ns },
      spec: { hard: { [QUOTA]: '2' } },
    };
    await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(quota) });
    // The local control plane runs no quota controller (tools/local-cluster/addons.ts); its first count, none
    // used, is written here as it would write it. Admission counts each create against it from then on.
    const counted = { status: { hard: { [QUOTA]: '2' }, used: { [QUOTA]: '0' } } };
    await kubectlOk([
      'patch',
      'resourcequota',
      'sandboxes',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(counted),
    ]);
    for (const name of ['sbx-1', 'sbx-2'])
      await kubectlOk(['create', '-f', '-'], { input: JSON.stringify(sandbox(ns, name)) });
    const third = await kubectl(['create', '-f', '-'], { input: JSON.stringify(sandbox(ns, 'sbx-3')) });
    expect(third.exitCode).not.toBe(0);
    expect(third.stderr).toContain('exceeded quota: sandboxes');
    expect(third.stderr).toContain(`${QUOTA}=2`);
  });
});
