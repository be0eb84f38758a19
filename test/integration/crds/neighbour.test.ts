/**
 * Beside kubernetes-sigs/agent-sandbox, whose CRDs also declare a `Sandbox` kind (agents.x-k8s.io): none of
 * our short names or our category is one of its names, and with its Sandbox CRD installed next to ours,
 * the forms the README documents (`sbx`, `sandboxes.sandbox.agents.dev`, the `sandbox-operator` category)
 * and the plugin still reach our objects only, even when both kinds have an object of the same name.
 * Its names are those of its CRDs at commit 2fd412d5 (v0.5.6 and later): k8s/crds/*.yaml.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GROUP,
  CATEGORY,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
  SESSION_REFERENCE,
} from '../../../operator/api/names.ts';
import { kubectlOk, testNamespace } from '../../harness/kube.ts';
import { kubectlAsUser } from '../../harness/plugin.ts';
import { sandbox } from './examples.ts';

/** agent-sandbox's resource names: kind, plural, singular and short names of each of its CRDs. */
const NEIGHBOUR = [
  { group: 'agents.x-k8s.io', names: ['Sandbox', 'sandboxes', 'sandbox', 'sandbox'] },
  { group: 'extensions.agents.x-k8s.io', names: ['SandboxClaim', 'sandboxclaims', 'sandboxclaim'] },
  { group: 'extensions.agents.x-k8s.io', names: ['SandboxTemplate', 'sandboxtemplates', 'sandboxtemplate'] },
  {
    group: 'extensions.agents.x-k8s.io',
    names: ['SandboxWarmPool', 'sandboxwarmpools', 'sandboxwarmpool', 'swp'],
  },
];
const NEIGHBOUR_GROUP = 'agents.x-k8s.io';
const NEIGHBOUR_CRD = `sandboxes.${NEIGHBOUR_GROUP}`;

const ns = testNamespace('neighbour');

/** The shape of agent-sandbox's Sandbox CRD that matters to name resolution (the schema is left open). */
const neighbourCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: NEIGHBOUR_CRD },
  spec: {
    group: NEIGHBOUR_GROUP,
    names: {
      kind: 'Sandbox',
      listKind: 'SandboxList',
      plural: 'sandboxes',
      singular: 'sandbox',
      shortNames: ['sandbox'],
    },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1beta1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

const names = async (resource: string) =>
  (await kubectlOk(['get', resource, '-n', ns, '-o', 'name'])).trim().split('\n').filter(Boolean).sort();

beforeAll(async () => {
  await kubectlOk(['apply', '--server-side', '-f', '-'], { input: JSON.stringify(neighbourCrd) });
  await kubectlOk(['wait', '--for=condition=Established', `crd/${NEIGHBOUR_CRD}`, '--timeout=60s']);
  await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(sandbox(ns, 'twin')) });
  await kubectlOk(['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: `${NEIGHBOUR_GROUP}/v1beta1`,
      kind: 'Sandbox',
      metadata: { name: 'twin', namespace: ns },
      spec: { podTemplate: { spec: { containers: [{ name: 'agent', image: 'registry.example/agent:1' }] } } },
    }),
  });
});
afterAll(async () => {
  // Other test files say `sandbox`; leave the cluster with our kind alone under that name.
  await kubectlOk(['delete', 'crd', NEIGHBOUR_CRD, '--wait=true']);
  // kubectl's discovery cache would still map `sandboxes` to the deleted CRD: `api-resources` refreshes it.
  await kubectlOk(['api-resources', '--api-group', GROUP]);
});

describe('beside kubernetes-sigs/agent-sandbox', () => {
  it('declares no short name or category that is one of its names', () => {
    const theirs = new Set(NEIGHBOUR.flatMap((crd) => crd.names.map((name) => name.toLowerCase())));
    const ours = [
      SANDBOX.shortName,
      SESSION_REFERENCE.shortName,
      SANDBOX_TEMPLATE.shortName,
      SANDBOX_WARM_POOL.shortName,
      SANDBOX_CLAIM.shortName,
      CATEGORY,
    ];
    expect(ours.filter((name) => theirs.has(name))).toEqual([]);
    expect(NEIGHBOUR.some((crd) => crd.group === GROUP)).toBe(false);
  });

  it('resolves sbx, the qualified plural and the category to our objects only', async () => {
    expect(await names('sbx')).toEqual(['sandbox.sandbox.agents.dev/twin']);
    expect(await names(`sandboxes.${GROUP}`)).toEqual(['sandbox.sandbox.agents.dev/twin']);
    expect(await names(CATEGORY)).toEqual(['sandbox.sandbox.agents.dev/twin']);
    expect(await names(`sandboxes.${NEIGHBOUR_GROUP}`)).toEqual([`sandbox.${NEIGHBOUR_GROUP}/twin`]);
  });

  it('has the plugin read our Sandbox, not the neighbour’s of the same name', async () => {
    const result = await kubectlAsUser(['sandbox', 'why', 'twin', '-n', ns, '-o', 'json']);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toMatchObject({ sandbox: { name: 'twin', worktree: 'wt-1' } });
  });
});
