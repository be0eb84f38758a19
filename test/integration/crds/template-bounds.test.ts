// spec.podTemplate is a bounded, pruned structural schema (issue 26, #5): a tenant cannot store a megabyte in a
// Sandbox's template (the operator once cached every Sandbox whole), an unknown field is refused or pruned,
// and every field a pod template carries (the ones the controller reads among them) reads back as written.
// `kubectl create`, never `apply`: apply's last-applied annotation would be refused first, for another reason.
import { describe, expect, it } from 'vitest';
import vendored from '../../../operator/api/pod-spec.schema.json' with { type: 'json' };
import { extractStructural } from '../../../scripts/pod-spec-extract.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { sandbox, type Manifest } from './examples.ts';

const ns = testNamespace('template-bounds');
const MIB = 'a'.repeat(1024 * 1024);
const RESOURCE = 'sandboxes.sandbox.agents.dev';

type Spec = Record<string, unknown>;
const withContainer = (name: string, container: Spec, pod: Spec = {}): Manifest =>
  sandbox(ns, name, {
    podTemplate: {
      spec: {
        containers: [{ name: 'workspace', image: 'registry.example/sandbox:1', ...container }],
        ...pod,
      },
    },
  });

async function stored(name: string): Promise<boolean> {
  const result = await kubectl(['get', RESOURCE, name, '-n', ns, '--ignore-not-found', '-o', 'name']);
  return result.stdout.trim() !== '';
}

describe('a megabyte in the pod template', () => {
  it.each([
    {
      field: 'an env value',
      object: (n: string) => withContainer(n, { env: [{ name: 'BIG', value: MIB }] }),
      refusal: 'spec.podTemplate.spec.containers[0].env[0].value: Too long: may not be more than 32768 bytes',
    },
    {
      field: 'an argument',
      object: (n: string) => withContainer(n, { args: [MIB] }),
      refusal: 'spec.podTemplate.spec.containers[0].args[0]: Too long: may not be more than 32768 bytes',
    },
    {
      field: 'a node selector value',
      object: (n: string) => withContainer(n, {}, { nodeSelector: { zone: MIB } }),
      refusal: 'spec.podTemplate.spec.nodeSelector.zone: Too long: may not be more than 4096 bytes',
    },
    {
      field: 'an annotation',
      object: (n: string) =>
        sandbox(ns, n, {
          podTemplate: {
            metadata: { annotations: { big: MIB } },
            spec: { containers: [{ name: 'workspace', image: 'registry.example/sandbox:1' }] },
          },
        }),
      refusal: 'spec.podTemplate.metadata.annotations.big: Too long: may not be more than 4096 bytes',
    },
  ])(
    'is refused in $field, naming the field and the limit, and nothing is stored',
    async ({ object, refusal }) => {
      const name = `big-${Math.random().toString(36).slice(2, 8)}`;
      const result = await kubectl(['create', '-f', '-'], { input: JSON.stringify(object(name)) });
      expect(result.exitCode).not.toBe(0);
      expect(result.stderr).toContain(refusal);
      expect(await stored(name)).toBe(false);
    },
  );

  it('is refused in a list of many small entries: the lists are bounded too', async () => {
    const env = Array.from({ length: 257 }, (_, i) => ({ name: `V${i}`, value: 'x' }));
    const result = await kubectl(['create', '-f', '-'], {
      input: JSON.stringify(withContainer('many-env', { env })),
    });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain(
      'spec.podTemplate.spec.containers[0].env: Too many: 257: must have at most 256 items',
    );
  });
});

describe('a field the PodSpec does not have', () => {
  const withUnknown = (name: string): Manifest =>
    withContainer(name, { bogusField: 'x' }, { bogusPodField: 1 });

  it("is refused by strict field validation (kubectl's default), naming it", async () => {
    const result = await kubectl(['create', '-f', '-'], {
      input: JSON.stringify(withUnknown('unknown-strict')),
    });
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('unknown field "spec.podTemplate.spec.containers[0].bogusField"');
    expect(result.stderr).toContain('unknown field "spec.podTemplate.spec.bogusPodField"');
  });

  it('is pruned when validation is off, so it is never stored', async () => {
    await kubectlOk(['create', '--validate=false', '-f', '-'], {
      input: JSON.stringify(withUnknown('unknown-pruned')),
    });
    const spec = await kubectlOk([
      'get',
      RESOURCE,
      'unknown-pruned',
      '-n',
      ns,
      '-o',
      'jsonpath={.spec.podTemplate.spec}',
    ]);
    expect(JSON.parse(spec)).toEqual({
      containers: [{ name: 'workspace', image: 'registry.example/sandbox:1' }],
    });
  });
});

describe('a realistic pod template', () => {
  // What the controller reads (the user and group, the ServiceAccount, the containers) and what it passes to
  // the pod (probes with named and numbered ports, quantities as numbers and strings, volumes): kept as written.
  const spec: Spec = {
    serviceAccountName: 'agent',
    automountServiceAccountToken: false,
    securityContext: { runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, fsGroup: 1000 },
    nodeSelector: { 'kubernetes.io/os': 'linux' },
    tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }],
    terminationGracePeriodSeconds: 30,
    volumes: [
      { name: 'work', emptyDir: { sizeLimit: '1Gi' } },
      { name: 'config', configMap: { name: 'agent-config', items: [{ key: 'a', path: 'a.json' }] } },
    ],
    containers: [
      {
        name: 'workspace',
        image: 'registry.example/sandbox:1',
        command: ['sleep', 'infinity'],
        env: [
          { name: 'A', value: 'b' },
          { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        ],
        ports: [{ name: 'http', containerPort: 8080 }],
        resources: { requests: { cpu: '500m', memory: '256Mi' }, limits: { cpu: 1, memory: '1Gi' } },
        readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 5 },
        livenessProbe: { tcpSocket: { port: 8080 } },
        securityContext: {
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
          seccompProfile: { type: 'RuntimeDefault' },
        },
        volumeMounts: [{ name: 'work', mountPath: '/work' }],
      },
    ],
  };

  it('reads back exactly as written (nothing pruned, nothing defaulted)', async () => {
    await kubectlOk(['create', '-f', '-'], {
      input: JSON.stringify(sandbox(ns, 'realistic', { podTemplate: { spec } })),
    });
    const read = await kubectlOk([
      'get',
      RESOURCE,
      'realistic',
      '-n',
      ns,
      '-o',
      'jsonpath={.spec.podTemplate.spec}',
    ]);
    expect(JSON.parse(read)).toEqual(spec);
  });
});

describe('the vendored PodSpec', () => {
  it("is what this API server's OpenAPI says (regenerate with npm run pod-spec-schema)", async () => {
    const openapi: unknown = JSON.parse(await kubectlOk(['get', '--raw', '/openapi/v3/api/v1']));
    expect(vendored.schema).toEqual(extractStructural(openapi, 'io.k8s.api.core.v1.PodSpec'));
  });
});
