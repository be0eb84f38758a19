/**
 * The pod-template policy beyond the securityContext (issue 26, item 3), against the real API server: what
 * Pod Security baseline also checks (AppArmor annotations), the names the operator's injection uses, the
 * scheduling fields that bypass the scheduler's and the administrator's placement (nodeName, control-plane
 * tolerations, system priority classes), gitRepo volumes, and an administrator's runtime-class pin.
 */
import { describe, expect, it } from 'vitest';
import { kwokNodeName } from '@sandbox-operator/local-cluster';
import { RUNTIME_CLASSES_ANNOTATION } from '../../../operator/api/names.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { createSandboxWith, type TemplateChange } from '../controller/fixtures.ts';

const namespace = testNamespace('template-baseline');
const pinned = testNamespace('template-runtime');
const privileged = testNamespace('template-privileged');
const tightened = testNamespace('template-tightened');

let serial = 0;

/** Creates a Sandbox whose template is the fixture's with `change`; 'created' or the API server's message. */
const createWith = (ns: string, change: TemplateChange) => createSandboxWith(ns, `tb-${serial++}`, change);

const APPARMOR = 'container.apparmor.security.beta.kubernetes.io/agent';

describe('at baseline, as Pod Security baseline', () => {
  it('refuses an AppArmor annotation other than runtime/default or localhost/*, naming it', async () => {
    const message = await createWith(namespace, { annotations: { [APPARMOR]: 'unconfined' } });
    expect(message).toContain(`spec.podTemplate.metadata.annotations[${APPARMOR}]`);
    expect(message).toContain('baseline');
  });

  it('accepts runtime/default and a localhost profile', async () => {
    expect(await createWith(namespace, { annotations: { [APPARMOR]: 'runtime/default' } })).toBe('created');
    expect(await createWith(namespace, { annotations: { [APPARMOR]: 'localhost/agent' } })).toBe('created');
  });
});

describe('the operator’s names are reserved', () => {
  it.each([
    [
      'a volume named as the reaper’s token',
      { spec: { volumes: [{ name: 'sandbox-reaper-token', emptyDir: {} }] } },
      'spec.podTemplate.spec.volumes[sandbox-reaper-token]',
    ],
    [
      'a mount of the reaper’s socket volume, declared by the operator',
      { container: { volumeMounts: [{ name: 'sandbox-reaper-socket', mountPath: '/s' }] } },
      'spec.podTemplate.spec.containers[agent].volumeMounts[sandbox-reaper-socket]',
    ],
    [
      'a mount of the reaper’s journal',
      { container: { volumeMounts: [{ name: 'sandbox-reaper-state', mountPath: '/j' }] } },
      'spec.podTemplate.spec.containers[agent].volumeMounts[sandbox-reaper-state]',
    ],
    [
      'an init container named as the reaper',
      { spec: { initContainers: [{ name: 'shell-reaper', image: 'registry.example/x:1' }] } },
      'spec.podTemplate.spec.initContainers[shell-reaper]',
    ],
    [
      'a container named as the reaper',
      { container: { name: 'shell-reaper' } },
      'spec.podTemplate.spec.containers[shell-reaper]',
    ],
  ])('refuses %s, naming the field and the name', async (_, change, field) => {
    const message = await createWith(namespace, change);
    expect(message).toContain(field);
    expect(message).toContain('reserved');
  });

  it('at every level, an exempted (privileged) namespace included', async () => {
    await kubectlOk(['label', 'namespace', privileged, 'sandbox.agents.dev/pod-template-level=privileged']);
    const change = { spec: { volumes: [{ name: 'sandbox-reaper-output', emptyDir: {} }] } };
    expect(await createWith(privileged, change)).toContain('volumes[sandbox-reaper-output]');
  });
});

describe('placement and volumes the scheduler or the node would trust', () => {
  it.each([
    [
      'a gitRepo volume',
      { spec: { volumes: [{ name: 'repo', gitRepo: { repository: 'x' } }] } },
      'volumes[repo].gitRepo',
    ],
    [
      'a node of its own choosing',
      { spec: { nodeName: 'control-plane-0' } },
      'spec.podTemplate.spec.nodeName',
    ],
    [
      'a toleration of the control-plane taint',
      { spec: { tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' }] } },
      'spec.podTemplate.spec.tolerations',
    ],
    [
      'a toleration of the master taint',
      { spec: { tolerations: [{ key: 'node-role.kubernetes.io/master', effect: 'NoSchedule' }] } },
      'spec.podTemplate.spec.tolerations',
    ],
    [
      'a toleration of every taint',
      { spec: { tolerations: [{ operator: 'Exists' }] } },
      'spec.podTemplate.spec.tolerations',
    ],
    [
      'a system priority class',
      { spec: { priorityClassName: 'system-node-critical' } },
      'spec.podTemplate.spec.priorityClassName',
    ],
  ])('refuses %s, naming the field', async (_, change, field) => {
    const message = await createWith(namespace, change);
    expect(message).toContain(field);
    expect(message).toContain('baseline');
  });

  it('accepts a node the administrator allows, ordinary tolerations and priority classes', async () => {
    const spec = {
      nodeName: kwokNodeName(1),
      tolerations: [{ key: 'kwok.x-k8s.io/node', operator: 'Exists' }],
      priorityClassName: 'agents-low',
    };
    expect(await createWith(namespace, { spec })).toBe('created');
  });
});

describe('runtime classes an administrator pins per namespace', () => {
  it('allows any runtime class where the namespace pins none', async () => {
    expect(await createWith(namespace, { spec: { runtimeClassName: 'anything' } })).toBe('created');
  });

  it('refuses another class or none where the namespace pins some, naming them', async () => {
    await kubectlOk(['annotate', 'namespace', pinned, `${RUNTIME_CLASSES_ANNOTATION}=gvisor,kata`]);
    for (const spec of [{}, { runtimeClassName: 'runc' }]) {
      const message = await createWith(pinned, { spec });
      expect(message).toContain('spec.podTemplate.spec.runtimeClassName');
      expect(message).toContain('gvisor, kata');
      expect(message).toContain(RUNTIME_CLASSES_ANNOTATION);
    }
    expect(await createWith(pinned, { spec: { runtimeClassName: 'kata' } })).toBe('created');
  });
});

describe('a Sandbox admitted before its namespace’s checks tightened', () => {
  it('stays writable while its template is untouched (the operator’s finalizer), and a template change is checked', async () => {
    const level = (value: string) =>
      kubectlOk([
        'label',
        'namespace',
        tightened,
        `sandbox.agents.dev/pod-template-level=${value}`,
        '--overwrite',
      ]);
    await level('privileged');
    const name = `tb-${serial}`;
    expect(await createWith(tightened, { spec: { nodeName: 'control-plane-0' } })).toBe('created');
    await level('baseline');
    // As the operator writes it: metadata only. Refused, it would hold the Sandbox's deletion forever.
    const annotated = await kubectl(['annotate', 'sandbox', name, '-n', tightened, 'team=billing']);
    expect(annotated.stderr).toBe('');
    const image =
      '[{"op":"replace","path":"/spec/podTemplate/spec/containers/0/image","value":"registry.example/b:2"}]';
    const changed = await kubectl(['patch', 'sandbox', name, '-n', tightened, '--type=json', '-p', image]);
    expect(changed.stderr).toContain('spec.podTemplate.spec.nodeName');
  });
});
