/**
 * Builders in domain words for the controller's unit tests: a sandbox with what the cache holds of it.
 *
 *   sandbox('sbx').deleting().withReference(attached('r1', 'wt-1')).withPods(2)
 *
 * `.build()` is the Sandbox object; `.store()` a StoreReader holding it, its references, pods and guard.
 */
import { API_VERSION, EXCLUSIVITY_FINALIZER, type Sandbox } from '../../operator/api/index.ts';
import type { BudgetSummary } from '../../operator/controller/budget-summary.ts';
import type { PodSummary } from '../../operator/controller/pod-summary.ts';
import { keyOf, type StoreReader } from '../../operator/controller/store.ts';
import type { ReferenceEntry } from '../../operator/index/index.ts';

export const NAMESPACE = 'ns';

type Spec = Sandbox['spec'];
type Metadata = Sandbox['metadata'];

export class SandboxBuilder {
  private metadata: Metadata;
  private spec: Spec;
  private status: Sandbox['status'] = undefined;
  private readonly references: ReferenceEntry[] = [];
  private readonly pods: PodSummary[] = [];
  private budget: BudgetSummary | undefined = undefined;

  constructor(name: string) {
    this.metadata = { name, namespace: NAMESPACE, uid: `uid-${name}`, generation: 1, resourceVersion: '1' };
    this.spec = {
      worktree: 'wt-1',
      provider: 'kubernetes',
      replicas: 0,
      podTemplate: { spec: { containers: [{ name: 'agent', image: 'agent:1' }] } },
      cleanup: { policy: 'Retain', ttlSecondsAfterUnreferenced: 300 },
      shellReaper: { enabled: false, gracePeriodSeconds: 5 },
    };
  }

  get name(): string {
    return this.metadata.name;
  }

  /** Carries our finalizer (as every sandbox does once the controller has seen it). */
  finalized(): this {
    this.metadata = { ...this.metadata, finalizers: [EXCLUSIVITY_FINALIZER] };
    return this;
  }

  /** Being deleted, held by our finalizer. */
  deleting(): this {
    this.finalized();
    this.metadata = { ...this.metadata, deletionTimestamp: '2026-11-30T12:00:00Z' };
    return this;
  }

  withMetadata(metadata: Partial<Metadata>): this {
    this.metadata = { ...this.metadata, ...metadata };
    return this;
  }

  withSpec(spec: Partial<Spec>): this {
    this.spec = { ...this.spec, ...spec };
    return this;
  }

  withStatus(status: Sandbox['status']): this {
    this.status = status;
    return this;
  }

  withAnnotation(key: string, value: string): this {
    this.metadata = { ...this.metadata, annotations: { ...this.metadata.annotations, [key]: value } };
    return this;
  }

  withReference(...entries: ReferenceEntry[]): this {
    this.references.push(...entries);
    return this;
  }

  /** `count` running pods, named <sandbox>-<ordinal>, each holding our finalizer. */
  withPods(count: number, overrides: Partial<PodSummary> = {}): this {
    for (let ordinal = 0; ordinal < count; ordinal += 1) this.pods.push(pod(this.name, ordinal, overrides));
    this.spec = { ...this.spec, replicas: Math.max(this.spec.replicas, count) };
    return this;
  }

  /** The eviction guard, as the cache last saw it. */
  withGuard(): this {
    this.budget = {
      namespace: NAMESPACE,
      name: `${this.name}-sandbox`,
      uid: `pdb-${this.name}`,
      sandbox: this.name,
      guards: true,
      deleting: false,
    };
    return this;
  }

  build(): Sandbox {
    return {
      apiVersion: API_VERSION,
      kind: 'Sandbox',
      metadata: this.metadata,
      spec: this.spec,
      ...(this.status === undefined ? {} : { status: this.status }),
    };
  }

  store(): StoreReader {
    const key = keyOf(NAMESPACE, this.name);
    const built = this.build();
    const mine = (sandboxKey: string) => sandboxKey === key;
    return {
      sandbox: (k) => (mine(k) ? { ok: true, value: built } : undefined),
      sandboxKeys: () => [key],
      references: (k) => (mine(k) ? [...this.references] : []),
      unreadableReferences: () => [],
      pods: (k) => (mine(k) ? [...this.pods] : []),
      budget: (k) => (mine(k) ? this.budget : undefined),
    };
  }

  /** What the API server would list of the sandbox's references (a consistent LIST). */
  liveReferences(): readonly ReferenceEntry[] {
    return [...this.references];
  }

  livePods(): readonly PodSummary[] {
    return [...this.pods];
  }
}

export const sandbox = (name = 'sbx'): SandboxBuilder => new SandboxBuilder(name);

export function pod(sandboxName: string, ordinal: number, overrides: Partial<PodSummary> = {}): PodSummary {
  return {
    namespace: NAMESPACE,
    name: `${sandboxName}-${ordinal}`,
    uid: `uid-${sandboxName}-${ordinal}`,
    sandbox: sandboxName,
    ordinal,
    deleting: false,
    finalizers: [EXCLUSIVITY_FINALIZER],
    ready: true,
    phase: 'Running',
    ...overrides,
  };
}
