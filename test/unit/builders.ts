/**
 * Builders in domain words for the controller's unit tests: a sandbox with what the cache holds of it.
 *
 *   sandbox('sbx').deleting().withReference(attached('r1', 'wt-1')).withPods(2)
 *
 * `.build()` is the Sandbox object; `.store()` a StoreReader holding it, its references, pods and guard.
 */
import {
  ANNOTATIONS,
  API_VERSION,
  EXCLUSIVITY_FINALIZER,
  LABELS,
  type Sandbox,
} from '../../operator/api/index.ts';
import type { BudgetSummary } from '../../operator/controller/cache/budget-summary.ts';
import type { PodSummary } from '../../operator/controller/cache/pod-summary.ts';
import { keyOf, type StoreReader } from '../../operator/controller/cache/store.ts';
import type { ReferenceEntry } from '../../operator/exclusivity/index.ts';

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
      operatingMode: 'Running',
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

  /** Being deleted (since `since`), held by our finalizer. */
  deleting(since = '2026-11-30T12:00:00Z'): this {
    this.finalized();
    this.metadata = { ...this.metadata, deletionTimestamp: since };
    return this;
  }

  /** Older than the index: adopted from `origin`, so it needs the legacy walk before the index decides. */
  adopted(origin = 'v1'): this {
    return this.withAnnotation(ANNOTATIONS.adoptedFrom, origin);
  }

  /** The status says `phase`. */
  inPhase(phase: NonNullable<Sandbox['status']>['phase']): this {
    this.status = { ...this.status, phase };
    return this;
  }

  /** The legacy walk's record in the status: its state, and whether the marker was earned. */
  withReconciliation(state: 'Pending' | 'Complete', marker: boolean): this {
    this.status = { ...this.status, reconciliation: { state, marker } };
    return this;
  }

  /** The status carries the condition `type` with `status` (the reason is the test's). */
  withCondition(type: string, status: 'True' | 'False', reason = 'Test'): this {
    const condition = { type, status, reason, message: '', lastTransitionTime: '2026-11-30T11:00:00Z' };
    this.status = { ...this.status, conditions: [...(this.status?.conditions ?? []), condition] };
    return this;
  }

  /** In namespace `namespace` (its store still answers under NAMESPACE). */
  inNamespace(namespace: string): this {
    this.metadata = { ...this.metadata, namespace };
    return this;
  }

  /** A sandbox of no worktree: every reference is foreign to it. */
  withoutWorktree(): this {
    const { worktree: _none, ...spec } = this.spec;
    this.spec = spec;
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
    // As the cache keeps it: no pod template (objects.ts, `SandboxState`); a turn reads that live.
    const { podTemplate: _template, ...spec } = this.build().spec;
    const state = { ...this.build(), spec };
    const mine = (sandboxKey: string) => sandboxKey === key;
    return {
      sandbox: (k) => (mine(k) ? { ok: true, value: state } : undefined),
      sandboxKeys: () => [key],
      references: (k) => (mine(k) ? [...this.references] : []),
      unreadableReferences: () => [],
      runningTurns: () => 0,
      // No reference carries a drain notice: a turn that wants one writes it (references.noticeDisruption).
      referenceNotices: (k) =>
        mine(k) ? this.references.map((r) => ({ state: r.state, notice: undefined })) : [],
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

  /** What a live GET of the Sandbox says (ports.ts, `LiveSandbox`): its incarnation and its pod template. */
  live(): { uid: string; deleting: boolean; finalizers: string[]; podTemplate: Spec['podTemplate'] } {
    return {
      uid: this.metadata.uid ?? '',
      deleting: this.metadata.deletionTimestamp !== undefined,
      finalizers: this.metadata.finalizers ?? [],
      podTemplate: this.spec.podTemplate,
    };
  }
}

export const sandbox = (name = 'sbx'): SandboxBuilder => new SandboxBuilder(name);

type ReferenceRole = 'Root' | 'Subagent' | 'Board' | 'Ticket';

/**
 * A SessionReference as the API server holds it (raw, so a test can parse it as its subject does):
 *
 *   sessionReference('r1').of('sbx-a').fromWorktree('wt-2').detached()
 */
export class SessionReferenceBuilder {
  private namespace = NAMESPACE;
  private sandbox = 'sbx';
  private session: string;
  private worktree: string | undefined = undefined;
  private role: ReferenceRole = 'Root';
  private state: 'Attached' | 'Detached' = 'Attached';
  private status: Record<string, unknown> | undefined = undefined;
  private broken: Record<string, unknown> = {};

  constructor(private readonly name: string) {
    this.session = `workspace_${name}`;
  }

  inNamespace(namespace: string): this {
    this.namespace = namespace;
    return this;
  }
  /** Names the sandbox it refers to. */
  of(sandbox: string): this {
    this.sandbox = sandbox;
    return this;
  }
  fromWorktree(worktree: string | undefined): this {
    this.worktree = worktree;
    return this;
  }
  forSession(session: string): this {
    this.session = session;
    return this;
  }
  /** A subagent's reference names its parent session. */
  as(role: ReferenceRole): this {
    this.role = role;
    return this;
  }
  /** A tombstone: the session detached. */
  detached(): this {
    this.state = 'Detached';
    return this;
  }
  inState(state: 'Attached' | 'Detached'): this {
    this.state = state;
    return this;
  }
  withStatus(status: Record<string, unknown> | undefined): this {
    this.status = status;
    return this;
  }
  /** A spec field the schema refuses, as a broken client would write it. */
  malformed(field: string, value: unknown): this {
    this.broken = { ...this.broken, [field]: value };
    return this;
  }

  raw(): Record<string, unknown> {
    return {
      apiVersion: API_VERSION,
      kind: 'SessionReference',
      metadata: { name: this.name, namespace: this.namespace },
      spec: {
        sandbox: this.sandbox,
        session: this.session,
        ...(this.worktree === undefined ? {} : { worktree: this.worktree }),
        route: `shared-control-v1/${this.name}`,
        role: this.role,
        ...(this.role === 'Subagent' ? { parentSession: 'workspace_root' } : {}),
        state: this.state,
        ...this.broken,
      },
      ...(this.status ? { status: this.status } : {}),
    };
  }
}

export const sessionReference = (name: string): SessionReferenceBuilder => new SessionReferenceBuilder(name);

export function pod(sandboxName: string, ordinal: number, overrides: Partial<PodSummary> = {}): PodSummary {
  return {
    namespace: NAMESPACE,
    name: `${sandboxName}-${ordinal}`,
    uid: `uid-${sandboxName}-${ordinal}`,
    resourceVersion: '5',
    sandbox: sandboxName,
    ordinal,
    deleting: false,
    finalizers: [EXCLUSIVITY_FINALIZER],
    ready: true,
    phase: 'Running',
    node: undefined,
    ...overrides,
  };
}

/**
 * A sandbox pod as the API server holds it (raw, as the pod watch hands it to the store): labelled with its
 * sandbox and ordinal, and owned by whatever `ownedBy` names (nothing: a pod that only claims the label).
 *
 *   podObject('sbx', 0).ownedBy(sandboxOwner('sbx'))
 */
export class PodObjectBuilder {
  private namespace = NAMESPACE;
  private owners: object[] | undefined = undefined;
  constructor(
    private readonly sandbox: string,
    private readonly ordinal: number,
  ) {}
  inNamespace(namespace: string): this {
    this.namespace = namespace;
    return this;
  }
  ownedBy(...owners: object[]): this {
    this.owners = [...(this.owners ?? []), ...owners];
    return this;
  }
  raw(): Record<string, unknown> {
    const name = `${this.sandbox}-${this.ordinal}`;
    const labels = { [LABELS.sandbox]: this.sandbox, [LABELS.podIndex]: String(this.ordinal) };
    const owners = this.owners ? { ownerReferences: this.owners } : {};
    return { metadata: { name, namespace: this.namespace, uid: `uid-${name}`, labels, ...owners } };
  }
}

export const podObject = (sandbox: string, ordinal: number) => new PodObjectBuilder(sandbox, ordinal);
/** The owner reference a Sandbox's pod carries (`kind` and `apiVersion` overridable, to claim another owner). */
export const sandboxOwner = (name: string, owner: { kind?: string; apiVersion?: string } = {}) => ({
  apiVersion: API_VERSION,
  kind: 'Sandbox',
  name,
  ...owner,
});
