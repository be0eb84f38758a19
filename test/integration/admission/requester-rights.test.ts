/**
 * A Sandbox's author holds the rights its pods need (issue 26, #9): a persona allowed to create Sandboxes but
 * not pods would get pods through the operator — and with them the namespace's Secrets and ServiceAccounts.
 * So does a SandboxTemplate's (issue 28): a warm pool's Sandboxes are created by the operator from it.
 * Against the real API server, each persona a ServiceAccount with its own Role.
 */
import { CustomObjectsApi, RbacAuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { GROUP, SANDBOX, SANDBOX_TEMPLATE, VERSION } from '../../../operator/api/names.ts';
import { JSON_PATCH, kubeConfig, serviceAccountKubeConfig, testNamespace } from '../../harness/kube.ts';
import { sandboxManifest } from '../controller/fixtures.ts';

const namespace = testNamespace('requester-rights');
let sandboxOnly: KubeConfig;
let podAuthor: KubeConfig;

/** A Role in the namespace with these rules, bound to the ServiceAccount `account`, and its kubeconfig. */
async function persona(account: string, rules: { apiGroups: string[]; resources: string[] }[]) {
  const rbac = kubeConfig().makeApiClient(RbacAuthorizationV1Api);
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: { name: account },
      rules: rules.map((rule) => ({ ...rule, verbs: ['create', 'get', 'list', 'patch', 'update'] })),
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name: account },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account },
      subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
    },
  });
  return serviceAccountKubeConfig(namespace, account);
}

const sandboxes = { apiGroups: [GROUP], resources: [SANDBOX.plural, SANDBOX_TEMPLATE.plural] };
const pods = { apiGroups: [''], resources: ['pods'] };

beforeAll(async () => {
  sandboxOnly = await persona('sandbox-only', [sandboxes]);
  podAuthor = await persona('pod-author', [sandboxes, pods]);
});

/** 'created' / 'patched', or the API server's message. */
const outcome = (write: Promise<unknown>, done: string) =>
  write.then(
    () => done,
    (error: unknown) => String((error as { body?: unknown }).body ?? error),
  );

const create = (kc: KubeConfig, name: string) =>
  outcome(
    kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: SANDBOX.plural,
      body: sandboxManifest(namespace, name),
    }),
    'created',
  );

const patch = (kc: KubeConfig, name: string, body: object) =>
  outcome(
    kc.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace,
        plural: SANDBOX.plural,
        name,
        body,
      },
      JSON_PATCH,
    ),
    'patched',
  );

const createTemplate = (kc: KubeConfig, name: string, podSpec?: Record<string, unknown>) => {
  const { spec } = sandboxManifest(namespace, name);
  const { podTemplate } = spec as { podTemplate: { spec: Record<string, unknown> } };
  return outcome(
    kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: SANDBOX_TEMPLATE.plural,
      body: {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: SANDBOX_TEMPLATE.kind,
        metadata: { name, namespace },
        spec: { podTemplate: { ...podTemplate, spec: { ...podTemplate.spec, ...podSpec } } },
      },
    }),
    'created',
  );
};

describe('the author of a SandboxTemplate', () => {
  it('may not write one without the right to create pods (a pool would create its pods), and is told which right', async () => {
    const said = await createTemplate(sandboxOnly, 'no-pods');
    expect(said).toContain('spec.podTemplate');
    expect(said).toContain(
      `system:serviceaccount:${namespace}:sandbox-only may not create pods in namespace`,
    );
    expect(await createTemplate(podAuthor, 'with-pods')).toBe('created');
  });

  it('is held to the namespace’s pod-template level when the template is written, not when a pool uses it', async () => {
    const said = await createTemplate(podAuthor, 'host-pid', { hostPID: true });
    expect(said).toContain('spec.podTemplate.spec.hostPID');
    expect(said).toContain('pod-template level baseline');
  });
});

describe('the author of a Sandbox', () => {
  it('may not create one without the right to create pods in its namespace, and is told which right', async () => {
    const said = await create(sandboxOnly, 'no-pods');
    expect(said).toContain('spec.podTemplate');
    expect(said).toContain(
      `system:serviceaccount:${namespace}:sandbox-only may not create pods in namespace`,
    );
    expect(said).toContain('grant create on pods');
  });

  it('creates one with that right', async () => {
    expect(await create(podAuthor, 'with-pods')).toBe('created');
  });

  it('without it, may still change what is not the template, but not the template', async () => {
    expect(await create(podAuthor, 'shared')).toBe('created');
    const annotate = [{ op: 'add', path: '/metadata/annotations', value: { 'example.com/note': 'x' } }];
    expect(await patch(sandboxOnly, 'shared', annotate)).toBe('patched');
    const image = [
      { op: 'replace', path: '/spec/podTemplate/spec/containers/0/image', value: 'registry.example/other:2' },
    ];
    expect(await patch(sandboxOnly, 'shared', image)).toContain('may not create pods');
    expect(await patch(podAuthor, 'shared', image)).toBe('patched');
  });
});
