/**
 * The Argo CD health checks install as docs/health.md says: a server-side apply of crds/argocd/argocd-cm.yaml
 * into the argocd-cm that Argo CD's installation created adds the two health keys, with the scripts of
 * operator/api/health/argocd, and leaves every other key and its manager alone.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  ARGOCD_HEALTH_KINDS,
  argoCdHealthKey,
  argoCdHealthScriptPath,
} from '../../../operator/api/render-argocd.ts';
import { kubectlOk, testNamespace } from '../../harness/kube.ts';
import { core } from '../controller/operator.ts';

const namespace = testNamespace('argocd');
const theirs = {
  url: 'https://argocd.example.com',
  'resource.customizations.health.example.com_Widget': 'return { status = "Healthy" }\n',
};

describe('the Argo CD health checks', () => {
  it('install into an existing argocd-cm by server-side apply, leaving its other keys alone', async () => {
    // As Argo CD's own install leaves it: created by another manager, with keys of its own.
    await core().createNamespacedConfigMap({
      namespace,
      body: {
        metadata: { name: 'argocd-cm', labels: { 'app.kubernetes.io/part-of': 'argocd' } },
        data: theirs,
      },
    });
    await kubectlOk([
      'apply',
      '--server-side',
      '--field-manager=sandbox-operator-health',
      '-n',
      namespace,
      '-f',
      'crds/argocd/argocd-cm.yaml',
    ]);
    const installed = await core().readNamespacedConfigMap({ namespace, name: 'argocd-cm' });
    const ours = Object.fromEntries(
      await Promise.all(
        ARGOCD_HEALTH_KINDS.map(async (kind) => [
          argoCdHealthKey(kind),
          await readFile(argoCdHealthScriptPath(kind), 'utf8'),
        ]),
      ),
    ) as Record<string, string>;
    expect(Object.keys(ours)).toEqual([
      'resource.customizations.health.sandbox.agents.dev_Sandbox',
      'resource.customizations.health.sandbox.agents.dev_SessionReference',
    ]);
    expect(installed.data).toEqual({ ...theirs, ...ours });
    const managers = (installed.metadata?.managedFields ?? []).map((entry) => entry.manager);
    expect(managers).toContain('sandbox-operator-health');
    expect(managers.length).toBe(2);
  });
});
