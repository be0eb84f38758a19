/**
 * The chart's secure profile (profiles/secure.yaml, docs/security.md) and the admission parameters the
 * chart fills in: the NetworkPolicy is on and admits no ingress, /metrics stays on the pod's loopback, and
 * Sandbox templates are checked at restricted.
 */
import type { V1Deployment, V1NetworkPolicy } from '@kubernetes/client-node';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../operator/controller/wiring/config.ts';
import { CHART, find, template } from './helm.ts';

const secure = async () => parse(await readFile(join(CHART, 'profiles', 'secure.yaml'), 'utf8')) as object;

describe('the secure profile', () => {
  it('turns the NetworkPolicy on with no ingress at all', async () => {
    const policy = find(await template(await secure()), 'NetworkPolicy') as unknown as V1NetworkPolicy;
    expect(policy.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy.spec?.ingress).toEqual([]);
  });

  it('keeps /metrics on loopback and checks templates at restricted', async () => {
    const rendered = await template(await secure(), { namespace: 'platform' });
    const main = (find(rendered, 'Deployment') as unknown as V1Deployment).spec!.template.spec!
      .containers[0]!;
    expect(loadConfig(main.args!, {})).toMatchObject({ probeBind: ':8081', metricsBind: '127.0.0.1:8080' });
    expect(find(rendered, 'ConfigMap', 'sandbox-operator-admission')).toMatchObject({
      data: { podTemplateLevel: 'restricted', podTemplateExemptNamespaces: '', watchNamespaces: '' },
    });
  });
});

describe('the admission parameters', () => {
  it('carry the watched namespace, the template level and its exemptions from the values', async () => {
    const rendered = await template({
      operator: { watchNamespace: 'team-a' },
      podTemplatePolicy: { level: 'privileged', exemptNamespaces: ['ci', 'infra'] },
    });
    expect(find(rendered, 'ConfigMap', 'sandbox-operator-admission')).toMatchObject({
      data: {
        watchNamespaces: 'team-a',
        podTemplateLevel: 'privileged',
        podTemplateExemptNamespaces: 'ci,infra',
      },
    });
  });

  it('default to baseline with no exemptions, and every watched namespace managed', async () => {
    expect(find(await template(), 'ConfigMap', 'sandbox-operator-admission')).toMatchObject({
      data: { podTemplateLevel: 'baseline', podTemplateExemptNamespaces: '', managedNamespaceLabel: '' },
    });
  });

  it('carry the per-namespace opt-in label (operator.managedNamespaceLabel)', async () => {
    const rendered = await template({
      operator: { managedNamespaceLabel: 'sandbox.agents.dev/managed=true' },
    });
    expect(find(rendered, 'ConfigMap', 'sandbox-operator-admission')).toMatchObject({
      data: { managedNamespaceLabel: 'sandbox.agents.dev/managed=true' },
    });
    // The operator skips the same namespaces the bounds refuse it, and says so once each.
    const main = (find(rendered, 'Deployment') as unknown as V1Deployment).spec!.template.spec!
      .containers[0]!;
    expect(loadConfig(main.args!, {}).managedNamespaceLabel).toBe('sandbox.agents.dev/managed=true');
    const byDefault = (find(await template(), 'Deployment') as unknown as V1Deployment).spec!.template.spec!
      .containers[0]!;
    expect(loadConfig(byDefault.args!, {}).managedNamespaceLabel).toBe('');
  });

  it('refuse an opt-in label that is not key=value', async () => {
    await expect(template({ operator: { managedNamespaceLabel: 'managed' } })).rejects.toThrow(
      /managedNamespaceLabel/,
    );
  });
});
