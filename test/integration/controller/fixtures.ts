/** Objects for controller tests, in domain words. */
import { API_VERSION, GROUP, SANDBOX, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import type { Sandbox, SessionReference } from '../../../operator/api/objects.ts';
import { inject } from 'vitest';
import { kwokNodeName } from '@sandbox-operator/local-cluster';
import { eventually, pending } from '../../harness/eventually.ts';
import { customObjects } from './operator.ts';

/**
 * On the local control plane pods run on a kwok node (no scheduler there); on a real cluster (kind) the
 * scheduler places them and a pause image really runs.
 */
const local = () => inject('clusterKind') === 'local';

export type SandboxOptions = {
  worktree?: string;
  replicas?: number;
  cleanup?: object;
  annotations?: Record<string, string>;
  onNode?: boolean;
  finalizers?: string[];
  /** With the shell reaper, and the one pinned user its default mode needs (Auto never runs it as root). */
  shellReaper?: boolean;
  /** Suspension fields (spec.operatingMode, spec.workspace, spec.idle), as given. */
  suspension?: Record<string, unknown>;
  /** A persistent workspace: spec.volumeClaimTemplates as given. */
  volumeClaimTemplates?: object[];
};

export function sandboxManifest(namespace: string, name: string, options: SandboxOptions = {}) {
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX.kind,
    metadata: {
      name,
      namespace,
      ...(options.annotations ? { annotations: options.annotations } : {}),
      ...(options.finalizers ? { finalizers: options.finalizers } : {}),
    },
    spec: {
      ...(options.worktree ? { worktree: options.worktree } : {}),
      replicas: options.replicas ?? 1,
      ...(options.cleanup ? { cleanup: options.cleanup } : {}),
      ...(options.shellReaper ? { shellReaper: { enabled: true } } : {}),
      ...options.suspension,
      ...(options.volumeClaimTemplates ? { volumeClaimTemplates: options.volumeClaimTemplates } : {}),
      podTemplate: {
        spec: {
          ...(options.onNode === false || !local() ? {} : { nodeName: kwokNodeName(0) }),
          ...(options.shellReaper ? { securityContext: { runAsUser: 1000, runAsGroup: 1000 } } : {}),
          containers: [
            { name: 'agent', image: local() ? 'registry.example/agent:1' : 'registry.k8s.io/pause:3.10' },
          ],
        },
      },
    },
  };
}

/** A change to the fixture's pod template: pod spec fields, its one container's fields, template annotations. */
export type TemplateChange = {
  spec?: Record<string, unknown>;
  container?: Record<string, unknown>;
  annotations?: Record<string, string>;
};

/** Creates Sandbox `name` with the fixture's template and `change`: 'created', or the API server's message. */
export async function createSandboxWith(
  namespace: string,
  name: string,
  { spec = {}, container = {}, annotations }: TemplateChange,
): Promise<string> {
  const manifest = sandboxManifest(namespace, name);
  const [agent] = manifest.spec.podTemplate.spec.containers;
  const podTemplate = {
    ...(annotations ? { metadata: { annotations } } : {}),
    spec: { ...manifest.spec.podTemplate.spec, containers: [{ ...agent, ...container }], ...spec },
  };
  const body = { ...manifest, spec: { ...manifest.spec, podTemplate } };
  return customObjects()
    .createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: SANDBOX.plural, body })
    .then(
      () => 'created',
      (error: unknown) => String((error as { body?: unknown }).body ?? error),
    );
}

export async function createSandbox(namespace: string, name: string, options: SandboxOptions = {}) {
  await customObjects().createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SANDBOX.plural,
    body: sandboxManifest(namespace, name, options),
  });
}

export type ReferenceOptions = {
  sandbox: string;
  session: string;
  worktree?: string;
  state?: 'Attached' | 'Detached';
  role?: string;
  /** A Subagent's parent session (the CRD requires one for that role). */
  parentSession?: string;
};

export async function createReference(namespace: string, name: string, options: ReferenceOptions) {
  await customObjects().createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SESSION_REFERENCE.plural,
    body: {
      apiVersion: API_VERSION,
      kind: SESSION_REFERENCE.kind,
      metadata: { name, namespace },
      spec: {
        sandbox: options.sandbox,
        session: options.session,
        ...(options.worktree ? { worktree: options.worktree } : {}),
        route: `shared-control-v1/${options.session}`,
        role: options.role ?? 'Root',
        ...(options.parentSession ? { parentSession: options.parentSession } : {}),
        state: options.state ?? 'Attached',
      },
    },
  });
}

type SandboxObject = Pick<Sandbox, 'metadata' | 'status'>;

/** What a wait on a sandbox says it last saw: its phase, its verdict and what else decides its fate. */
export function sandboxSeen(sandbox: SandboxObject | undefined): Record<string, unknown> {
  if (sandbox === undefined) return { sandbox: 'gone' };
  const { metadata, status } = sandbox;
  return {
    phase: status?.phase,
    verdict: status?.decision ? `${status.decision.verdict} (${status.decision.evidence})` : undefined,
    references: status?.references,
    reconciliation: status?.reconciliation?.state,
    deleting: metadata.deletionTimestamp !== undefined,
    finalizers: metadata.finalizers,
    conditions: status?.conditions?.map((c) => `${c.type}=${c.status} (${c.reason})`),
  };
}

/** Waits until the sandbox exists and `wanted` holds of it; on timeout says what it last saw of it. */
export async function untilSandbox(
  namespace: string,
  name: string,
  what: string,
  wanted: (sandbox: SandboxObject) => boolean,
  timeoutMs?: number,
): Promise<SandboxObject> {
  return eventually(
    what,
    async () => {
      const sandbox = await getSandbox(namespace, name);
      return sandbox !== undefined && wanted(sandbox) ? sandbox : pending(sandboxSeen(sandbox));
    },
    timeoutMs,
  );
}

/** Waits until the sandbox is gone; on timeout says its phase, verdict, finalizers and conditions as last seen. */
export async function sandboxGone(namespace: string, name: string, timeoutMs = 60_000): Promise<void> {
  await eventually(
    `${name} gone`,
    async () => {
      const sandbox = await getSandbox(namespace, name);
      return sandbox === undefined ? true : pending(sandboxSeen(sandbox));
    },
    timeoutMs,
  );
}

export async function getSandbox(namespace: string, name: string): Promise<SandboxObject | undefined> {
  try {
    return (await customObjects().getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: SANDBOX.plural,
      name,
    })) as SandboxObject;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

export async function getReference(namespace: string, name: string): Promise<SessionReference | undefined> {
  try {
    return (await customObjects().getNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: SESSION_REFERENCE.plural,
      name,
    })) as SessionReference;
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

export async function deleteSandbox(namespace: string, name: string, propagationPolicy?: string) {
  await customObjects().deleteNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SANDBOX.plural,
    name,
    ...(propagationPolicy ? { propagationPolicy } : {}),
  });
}

export async function deleteReference(namespace: string, name: string) {
  await customObjects().deleteNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SESSION_REFERENCE.plural,
    name,
  });
}
