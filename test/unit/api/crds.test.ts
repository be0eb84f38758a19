import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { admissionParams } from '../../../operator/api/admission.ts';
import { generatedFiles } from '../../../operator/api/generate-crds.ts';
import {
  sandboxClaimCrd,
  sandboxCrd,
  sandboxTemplateCrd,
  sandboxWarmPoolCrd,
  sessionReferenceCrd,
} from '../../../operator/api/crd.ts';
import { sandboxStatusSchema, UNOBSERVED_STATUS } from '../../../operator/api/sandbox.ts';
import { admissionPolicies, renderChartAdmissionPolicy } from '../../../operator/api/render-crds.ts';

const root = join(import.meta.dirname, '..', '..', '..');

describe('the checked-in manifests', () => {
  it.each(Object.entries(generatedFiles()))(
    '%s matches what the generator produces (run npm run crds)',
    async (file, text) => {
      expect(await readFile(join(root, file), 'utf8')).toBe(text);
    },
  );
});

type Schema = {
  [key: string]: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
};

/** The schemas below `node`: its properties, its items and its map values, each with its path. */
function children(node: Schema, path: string): [Schema, string][] {
  const values = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
  return [
    ...Object.entries(node.properties ?? {}).map(([key, child]): [Schema, string] => [
      child,
      `${path}.${key}`,
    ]),
    ...(node.items ? [[node.items, `${path}[]`] as [Schema, string]] : []),
    ...(values ? [[values, `${path}{}`] as [Schema, string]] : []),
  ];
}

/**
 * Every node of a structural schema has a type (or preserves unknown fields, or is an int-or-string: a port,
 * a quantity) and no additionalProperties: false.
 */
function structuralProblems(node: Schema, path: string): string[] {
  const problems: string[] = [];
  if (
    node['type'] === undefined &&
    node['x-kubernetes-preserve-unknown-fields'] !== true &&
    node['x-kubernetes-int-or-string'] !== true
  )
    problems.push(`${path}: no type`);
  if (node['additionalProperties'] === false) problems.push(`${path}: additionalProperties false`);
  if ('$ref' in node || 'anyOf' in node || 'oneOf' in node) problems.push(`${path}: not structural`);
  for (const [child, at] of children(node, path)) problems.push(...structuralProblems(child, at));
  return problems;
}

// A Sandbox owns pods: its eviction guard's maxUnavailable is computed against /scale (issue 27).
const sandboxSubresources = {
  status: {},
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.pods.total' },
};

describe.each([
  ['Sandbox', sandboxCrd, 'sbx', sandboxSubresources],
  ['SessionReference', sessionReferenceCrd, 'sref', { status: {} }],
  // A template is only read: nobody writes its status.
  ['SandboxTemplate', sandboxTemplateCrd, 'sbt', {}],
  // Autoscalers (HPA, KEDA) set a pool's replicas through /scale (docs/warm-pools.md).
  [
    'SandboxWarmPool',
    sandboxWarmPoolCrd,
    'sbwp',
    {
      status: {},
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.selector',
      },
    },
  ],
  ['SandboxClaim', sandboxClaimCrd, 'sbc', { status: {} }],
])('the %s CRD', (_kind, crd, shortName, subresources) => {
  const version = crd.spec.versions[0]!;
  const schema = version.schema.openAPIV3Schema as Schema;

  it('is structural', () => {
    expect(structuralProblems(schema, '')).toEqual([]);
  });

  it('has its subresources, short name and category', () => {
    expect(version.subresources).toEqual(subresources);
    expect(crd.spec.names.shortNames).toEqual([shortName]);
    expect(crd.spec.names.categories).toEqual(['sandbox-operator']);
  });

  it('points /scale at fields of its own schema: integer replicas, a string selector', () => {
    const scale = (version.subresources as { scale?: Record<string, string> }).scale ?? {};
    for (const [key, path] of Object.entries(scale)) {
      const field = path
        .slice(1)
        .split('.')
        .reduce<Schema | undefined>((node, part) => node?.properties?.[part], schema);
      expect(field?.type, path).toBe(key === 'labelSelectorPath' ? 'string' : 'integer');
    }
  });

  it('describes every spec field for kubectl explain', () => {
    const undescribed = Object.entries(schema.properties!['spec']!.properties!).filter(
      ([, field]) => !field['description'],
    );
    expect(undescribed.map(([name]) => name)).toEqual([]);
  });

  // Below spec.podTemplate.spec is the vendored PodSpec, without its descriptions (they would make the CRD
  // too large to apply): `kubectl explain pod.spec` describes it.
  it('describes every field of spec and status, at every depth, for kubectl explain', () => {
    const undescribed: string[] = [];
    const walk = (node: Schema, path: string) => {
      for (const [key, child] of Object.entries(node.properties ?? {})) {
        if (!child['description']) undescribed.push(`${path}.${key}`);
        if (`${path}.${key}` !== 'spec.podTemplate.spec') walk(child, `${path}.${key}`);
      }
      if (node.items) walk(node.items, `${path}[]`);
    };
    walk(schema.properties!['spec']!, 'spec');
    if (schema.properties!['status']) walk(schema.properties!['status'], 'status');
    expect(undescribed).toEqual([]);
  });

  // Issue 26, #5: a tenant's object cannot hold a megabyte in one field, nor an unbounded list or map.
  it('bounds every string, list and map', () => {
    const unbounded: string[] = [];
    const walk = (node: Schema, path: string) => {
      const text = node['type'] === 'string' || node['x-kubernetes-int-or-string'] === true;
      if (
        text &&
        node['maxLength'] === undefined &&
        node['enum'] === undefined &&
        node['format'] !== 'date-time'
      ) {
        unbounded.push(path);
      }
      if (node['type'] === 'array' && node['maxItems'] === undefined) unbounded.push(path);
      if (typeof node.additionalProperties === 'object' && node['maxProperties'] === undefined)
        unbounded.push(path);
      for (const [child, at] of children(node, path)) walk(child, at);
    };
    walk(schema.properties!['spec']!, 'spec');
    if (schema.properties!['status']) walk(schema.properties!['status'], 'status');
    expect(unbounded).toEqual([]);
  });
});

describe('the Sandbox status a GET returns before the operator wrote one', () => {
  const status = sandboxCrd.spec.versions[0]!.schema.openAPIV3Schema.properties.status as Schema;

  it('is the CRD default: observed generation 0, below every generation, so kstatus reads it InProgress', () => {
    expect(status['default']).toEqual({ observedGeneration: 0 });
    expect(status['default']).toEqual(UNOBSERVED_STATUS);
  });

  it('is a status the schema accepts (the API server refuses a CRD whose default does not validate)', () => {
    expect(sandboxStatusSchema.parse(UNOBSERVED_STATUS)).toEqual(UNOBSERVED_STATUS);
  });

  it('is only the Sandbox’s: no operator writes a SessionReference’s status', () => {
    const reference = sessionReferenceCrd.spec.versions[0]!.schema.openAPIV3Schema.properties
      .status as Schema;
    expect(reference['default']).toBeUndefined();
  });
});

describe('printer columns', () => {
  const names = (crd: typeof sandboxCrd) => crd.spec.versions[0]!.additionalPrinterColumns.map((c) => c.name);

  it('show a Sandbox’s phase, worktree, reference counts, verdict and age', () => {
    expect(names(sandboxCrd)).toEqual(
      expect.arrayContaining(['Phase', 'Worktree', 'Attached', 'Detached', 'Foreign', 'Verdict', 'Age']),
    );
  });

  it('show a SessionReference’s sandbox, session, worktree, role, state, turn and age', () => {
    expect(names(sessionReferenceCrd)).toEqual(
      expect.arrayContaining(['Sandbox', 'Session', 'Worktree', 'Role', 'State', 'Turn', 'Age']),
    );
  });
});

describe('the chart’s admission policy template', () => {
  /** What Helm makes of the template for release `rel` in namespace `ops` and two operator users. */
  const rendered = () =>
    renderChartAdmissionPolicy()
      .split('\n')
      .filter((line) => !line.startsWith('{{- if') && !line.startsWith('{{- end'))
      // operator.watchNamespace is set (team-a below): the scope's if-branch stays, its else and end go.
      .filter((line) => !/^ +\{\{- (else|end) \}\}/.test(line))
      .join('\n')
      .replaceAll(' {{- if .Values.operator.watchNamespace }}', '')
      .replaceAll('{{ .Release.Namespace }}', 'ops')
      .replaceAll(
        '{{ include "sandbox-operator.podProtectionPolicy" . }}',
        'rel-pod-protection.sandbox.agents.dev',
      )
      .replaceAll(
        '{{ include "sandbox-operator.operatorBoundsPolicy" . }}',
        'rel-operator-bounds.sandbox.agents.dev',
      )
      .replaceAll(
        '{{ include "sandbox-operator.podTemplatePolicy" . }}',
        'rel-pod-template.sandbox.agents.dev',
      )
      .replaceAll(
        '{{ include "sandbox-operator.guardProtectionPolicy" . }}',
        'rel-guard-protection.sandbox.agents.dev',
      )
      .replaceAll(
        '{{ include "sandbox-operator.budgetProtectionPolicy" . }}',
        'rel-budget-protection.sandbox.agents.dev',
      )
      .replaceAll(
        '{{ include "sandbox-operator.claimProtectionPolicy" . }}',
        'rel-claim-protection.sandbox.agents.dev',
      )
      .replaceAll(
        '{{ include "sandbox-operator.reaperAccessPolicy" . }}',
        'rel-reaper-access.sandbox.agents.dev',
      )
      .replaceAll(
        '{{ include "sandbox-operator.reaperStatusPolicy" . }}',
        'rel-shell-reaper-status.sandbox.agents.dev',
      )
      .replaceAll(
        '{{ include "sandbox-operator.reaperEventsPolicy" . }}',
        'rel-shell-reaper-events.sandbox.agents.dev',
      )
      .replaceAll(`{{ printf "'%s'" .Values.shellReaper.serviceAccountName | quote }}`, `"'team-reaper'"`)
      .replaceAll('{{ include "sandbox-operator.admissionParams" . }}', 'rel-admission')
      .replaceAll(
        '{{ include "sandbox-operator.operatorUsers" . | quote }}',
        '"system:serviceaccount:ops:op,alice"',
      )
      .replaceAll('{{ .Values.operator.watchNamespace | quote }}', '"team-a"')
      .replaceAll('{{ .Values.podTemplatePolicy.level | quote }}', '"restricted"')
      .replaceAll('{{ join "," .Values.podTemplatePolicy.exemptNamespaces | quote }}', '"ci,infra"')
      .replaceAll('{{ join "," .Values.podTemplatePolicy.allowedNodeNames | quote }}', '"node-a"')
      .replaceAll(
        '{{ join "," .Values.admissionPolicy.administratorGroups | quote }}',
        '"system:masters,ops"',
      )
      .replaceAll('{{ .Values.operator.managedNamespaceLabel | quote }}', '"sandbox.agents.dev/managed=true"')
      .replaceAll(
        '{{ include "sandbox-operator.sidecarImage" . | quote }}',
        '"registry.example/operator@sha256:1"',
      )
      .replaceAll('{{ join "," .Values.admissionPolicy.reaperExtraEnv | quote }}', '"AWS_ROLE_ARN"')
      .replaceAll('{{ join "," .Values.admissionPolicy.reaperExtraMountPaths | quote }}', '"/var/run/aws"')
      .replaceAll('{{ ternary "allowed" "" .Values.admissionPolicy.sandboxPodsOnHostNetwork | quote }}', '""')
      .replace(/ \{\{- include "sandbox-operator\.labels" \. \| nindent (\d+) \}\}/g, (_, n: string) => {
        return `\n${' '.repeat(Number(n))}app.kubernetes.io/name: sandbox-operator`;
      });

  it('is the same objects as crds/policies/, with the release names, namespace, users, levels and labels filled in', () => {
    const labels = { 'app.kubernetes.io/name': 'sandbox-operator' };
    const withLabels = (object: { metadata: object }) => ({
      ...object,
      metadata: { ...object.metadata, labels },
    });
    const documents = parseAllDocuments(rendered()).map((doc) => doc.toJS() as unknown);
    const names = {
      podProtection: 'rel-pod-protection.sandbox.agents.dev',
      operatorBounds: 'rel-operator-bounds.sandbox.agents.dev',
      podTemplate: 'rel-pod-template.sandbox.agents.dev',
      guardProtection: 'rel-guard-protection.sandbox.agents.dev',
      budgetProtection: 'rel-budget-protection.sandbox.agents.dev',
      claimProtection: 'rel-claim-protection.sandbox.agents.dev',
      reaperAccess: 'rel-reaper-access.sandbox.agents.dev',
      reaperStatus: 'rel-shell-reaper-status.sandbox.agents.dev',
      reaperEvents: 'rel-shell-reaper-events.sandbox.agents.dev',
      reaperAccount: "'team-reaper'",
      params: 'rel-admission',
    };
    expect(documents).toEqual(
      [
        admissionParams(
          'ops',
          {
            operatorUsers: ['system:serviceaccount:ops:op', 'alice'],
            watchNamespaces: ['team-a'],
            podTemplateLevel: 'restricted',
            podTemplateExemptNamespaces: ['ci', 'infra'],
            podTemplateNodeNames: ['node-a'],
            administratorGroups: ['system:masters', 'ops'],
            managedNamespaceLabel: 'sandbox.agents.dev/managed=true',
            reaperImages: ['registry.example/operator@sha256:1'],
            reaperExtraEnv: ['AWS_ROLE_ARN'],
            reaperExtraMountPaths: ['/var/run/aws'],
            sandboxPodsOnHostNetwork: '',
          },
          names.params,
        ),
        ...admissionPolicies('ops', names, {
          namespaceSelector: {
            matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['team-a'] }],
          },
        }),
      ].map(withLabels),
    );
    const objects = documents as {
      kind: string;
      metadata: { name: string };
      spec?: Record<string, unknown>;
    }[];
    expect(objects.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'ConfigMap/rel-admission',
      'ValidatingAdmissionPolicy/rel-pod-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/rel-pod-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/rel-operator-bounds.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/rel-operator-bounds.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/rel-pod-template.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/rel-pod-template.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/rel-guard-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/rel-guard-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/rel-budget-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/rel-budget-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/rel-claim-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/rel-claim-protection.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/rel-reaper-access.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/rel-reaper-access.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/rel-shell-reaper-status.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/rel-shell-reaper-status.sandbox.agents.dev',
      'ValidatingAdmissionPolicy/rel-shell-reaper-events.sandbox.agents.dev',
      'ValidatingAdmissionPolicyBinding/rel-shell-reaper-events.sandbox.agents.dev',
    ]);
    // Every binding names its own policy and the one release-scoped parameters ConfigMap, but the reaper's
    // (reaper access excepts nobody; the reaper's rights are chosen by the authorizer), which read none.
    for (const binding of objects.filter((d) => d.kind === 'ValidatingAdmissionPolicyBinding')) {
      expect(binding.spec).toMatchObject({ policyName: binding.metadata.name });
      if (binding.metadata.name.includes('reaper')) expect(binding.spec).not.toHaveProperty('paramRef');
      else expect(binding.spec).toMatchObject({ paramRef: { name: 'rel-admission', namespace: 'ops' } });
    }
  });

  it('is switched by admissionPolicy.enabled', () => {
    const text = renderChartAdmissionPolicy();
    expect(text.startsWith('{{- if .Values.admissionPolicy.enabled }}\n')).toBe(true);
    expect(text.endsWith('{{- end }}\n')).toBe(true);
  });
});
