/**
 * The pod-template policy against the real API server: a namespace editor's Sandbox may not ask for more
 * than the configured Pod Security level (baseline by default) — refused at admission, with a message that
 * names the field — and an administrator can raise or lower the level per namespace.
 */
import { describe, expect, it } from 'vitest';
import { TEMPLATE_LEVEL_LABEL } from '../../../operator/api/template-policy.ts';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { ADMISSION_PARAMS } from '../../../operator/api/admission.ts';
import { eventually, pending } from '../../harness/eventually.ts';
import { kubectlOk, testNamespace } from '../../harness/kube.ts';
import { createSandboxWith } from '../controller/fixtures.ts';
import { core, OPERATOR_NAMESPACE } from '../controller/operator.ts';

const namespace = testNamespace('template-policy');
const exempt = testNamespace('template-exempt');
const strict = testNamespace('template-strict');

type Spec = Record<string, unknown>;
let serial = 0;

/** Creates a Sandbox whose pod spec is the fixture's plus `spec`; 'created' or the API server's message. */
const createWith = (ns: string, spec: Spec, container: Spec = {}) =>
  createSandboxWith(ns, `tpl-${serial++}`, { spec, container });

describe('at the default level (baseline)', () => {
  it.each([
    [
      'privileged',
      {},
      { securityContext: { privileged: true } },
      'containers[agent].securityContext.privileged',
    ],
    ['hostPID', { hostPID: true }, {}, 'spec.podTemplate.spec.hostPID'],
    ['hostNetwork', { hostNetwork: true }, {}, 'spec.podTemplate.spec.hostNetwork'],
    ['hostIPC', { hostIPC: true }, {}, 'spec.podTemplate.spec.hostIPC'],
    [
      'a hostPath volume of /',
      { volumes: [{ name: 'root', hostPath: { path: '/' } }] },
      {},
      'spec.podTemplate.spec.volumes[root].hostPath',
    ],
    [
      'an added capability',
      {},
      { securityContext: { capabilities: { add: ['SYS_ADMIN'] } } },
      'containers[agent].securityContext.capabilities.add',
    ],
    [
      'a host port',
      {},
      { ports: [{ containerPort: 80, hostPort: 80 }] },
      'containers[agent].ports[*].hostPort',
    ],
    [
      'an unconfined seccomp profile',
      { securityContext: { seccompProfile: { type: 'Unconfined' } } },
      {},
      'spec.podTemplate.spec.securityContext.seccompProfile',
    ],
  ])('refuses %s, naming the field', async (_, spec, container, field) => {
    const message = await createWith(namespace, spec, container);
    expect(message).toContain(field);
    expect(message).toContain('baseline');
  });

  it('accepts a template within baseline (a capability baseline allows, a root user)', async () => {
    expect(
      await createWith(
        namespace,
        {},
        { securityContext: { runAsUser: 0, capabilities: { add: ['NET_BIND_SERVICE'] } } },
      ),
    ).toBe('created');
  });
});

describe('per-namespace levels set by an administrator', () => {
  it('exempts a namespace labelled privileged', async () => {
    await kubectlOk(['label', 'namespace', exempt, `${TEMPLATE_LEVEL_LABEL}=privileged`]);
    expect(await createWith(exempt, { hostNetwork: true })).toBe('created');
  });

  it('applies restricted to a namespace labelled restricted', async () => {
    await kubectlOk(['label', 'namespace', strict, `${TEMPLATE_LEVEL_LABEL}=restricted`]);
    const message = await createWith(strict, {});
    expect(message).toContain('restricted');
    expect(message).toContain('runAsNonRoot');
    const compliant = {
      securityContext: {
        runAsNonRoot: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      },
    };
    expect(await createWith(strict, {}, compliant)).toBe('created');
  });

  it('follows a namespace that enforces restricted Pod Security when the configured level is lower', async () => {
    await kubectlOk(['label', 'namespace', namespace, 'pod-security.kubernetes.io/enforce=restricted']);
    try {
      expect(await createWith(namespace, {})).toContain('runAsNonRoot');
    } finally {
      await kubectlOk(['label', 'namespace', namespace, 'pod-security.kubernetes.io/enforce-']);
    }
  });
});

describe('the configured level (admission parameter podTemplateLevel, chart podTemplatePolicy.level)', () => {
  const setLevel = (value: string) =>
    core().patchNamespacedConfigMap(
      {
        name: ADMISSION_PARAMS,
        namespace: OPERATOR_NAMESPACE,
        body: [{ op: 'add', path: '/data/podTemplateLevel', value }],
      },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
  // The API server reads the parameters through an informer: a change is in force a moment after the patch.
  const createdOnce = (seen: (message: string) => boolean) =>
    eventually('the parameters in force', async () => {
      const message = await createWith(namespace, {});
      return seen(message) ? message : pending(message);
    });
  const restore = async () => {
    await setLevel('baseline');
    await createdOnce((message) => message === 'created');
  };

  it('applies to namespaces without a label of their own', async () => {
    await setLevel('restricted');
    try {
      expect(await createdOnce((message) => message !== 'created')).toContain('runAsNonRoot');
    } finally {
      await restore();
    }
  });

  it('fails closed on an unknown level, naming the setting', async () => {
    await setLevel('lenient');
    try {
      const message = await createdOnce((seen) => seen !== 'created');
      expect(message).toContain('pod-template level lenient is not one of privileged, baseline, restricted');
    } finally {
      await restore();
    }
  });
});
