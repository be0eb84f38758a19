/**
 * The names users, GitOps repositories and tests rely on: API group, kinds, finalizer, labels and
 * annotations. Rename none without a reason written in the commit.
 */

export const GROUP = 'sandbox.agents.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const SANDBOX = {
  kind: 'Sandbox',
  plural: 'sandboxes',
  singular: 'sandbox',
  shortName: 'sbx',
} as const;
export const SESSION_REFERENCE = {
  kind: 'SessionReference',
  plural: 'sessionreferences',
  singular: 'sessionreference',
  shortName: 'sref',
} as const;
/** The blueprint a pool's sandboxes (or a cold sandbox claim's) are made from (docs/warm-pools.md). */
export const SANDBOX_TEMPLATE = {
  kind: 'SandboxTemplate',
  plural: 'sandboxtemplates',
  singular: 'sandboxtemplate',
  shortName: 'sbt',
} as const;
/**
 * Keeps `spec.replicas` ready, unclaimed sandboxes of a template. Short name `sbwp`, not `swp`: that is
 * agent-sandbox's SandboxWarmPool's, and a likely neighbour's short name must not be ours (CATEGORY below).
 */
export const SANDBOX_WARM_POOL = {
  kind: 'SandboxWarmPool',
  plural: 'sandboxwarmpools',
  singular: 'sandboxwarmpool',
  shortName: 'sbwp',
} as const;
/**
 * A session's request for a sandbox from a pool (or cold, from a template). "Sandbox claim", never bare
 * "claim": claims are the workspace's PersistentVolumeClaims (controller/claims.ts).
 */
export const SANDBOX_CLAIM = {
  kind: 'SandboxClaim',
  plural: 'sandboxclaims',
  singular: 'sandboxclaim',
  shortName: 'sbc',
} as const;
/**
 * `kubectl get sandbox-operator` lists every kind. Not `sandbox`, which DESIGN first named: kubectl expands a
 * category before it resolves a resource, so a category equal to the singular name broke
 * `kubectl get sandbox <name>` ("you must specify only one resource"). Not `agent-sandbox` either, which
 * it was: that is the name of kubernetes-sigs/agent-sandbox, whose own `Sandbox` kind (agents.x-k8s.io) is a
 * likely neighbour; should it ever declare that category, `kubectl get agent-sandbox` would mix its
 * sandboxes with ours. Our short names (sbx, sref, sbt, sbwp, sbc) and this category are checked against its names in
 * test/integration/crds/neighbour.test.ts.
 */
export const CATEGORY = 'sandbox-operator';

/** Held by every Sandbox and every sandbox pod until the exclusivity verdict says "exclusive". */
export const EXCLUSIVITY_FINALIZER = `${GROUP}/exclusivity`;

/**
 * Held by every SandboxClaim until the operator has forgotten its SessionReference and handed its sandbox to
 * the ordinary deletion (docs/warm-pools.md, "Claims").
 */
export const SANDBOX_CLAIM_FINALIZER = `${GROUP}/sandbox-claim`;

export const LABELS = {
  /** On sandbox pods: the owning Sandbox's name (Sandbox names are DNS labels, so it fits a label value). */
  sandbox: `${GROUP}/sandbox`,
  /** On sandbox pods: the pod's ordinal within its Sandbox. */
  podIndex: `${GROUP}/pod-index`,
  managedBy: 'app.kubernetes.io/managed-by',
  /**
   * On a Sandbox, set only by the operator (admission.ts): the SandboxWarmPool it was made for. It stays when
   * the sandbox is claimed; the claim label says whether it still counts for the pool.
   */
  warmPool: `${GROUP}/warm-pool`,
  /** On a pool's Sandbox: the SandboxTemplate it was copied from. */
  template: `${GROUP}/template`,
  /**
   * On a Sandbox and on a SessionReference, set only by the operator (admission.ts): the SandboxClaim the
   * sandbox is bound to, or the reference was made for. A pool never touches a sandbox carrying it.
   */
  sandboxClaim: `${GROUP}/sandbox-claim`,
  /**
   * On a sandbox's NetworkPolicy, which has no owner (network-policy.ts): the uid of the Sandbox incarnation it
   * isolates, so a release removes only its own and a later Sandbox of the name puts a leftover back as its own.
   */
  sandboxUid: `${GROUP}/sandbox-uid`,
} as const;

export const MANAGED_BY = 'sandbox-operator';

/**
 * The shell reaper sidecar's container name in every sandbox pod: the operator's, so admission refuses exec
 * and attach into it (reaper-access.ts).
 */
export const REAPER_CONTAINER = 'shell-reaper';

/**
 * The shell reaper's own ServiceAccount, for templates that keep none (`--sidecar-service-account`,
 * `shellReaper.serviceAccountName`); admission narrows it whatever rights it is given (reaper-rights.ts).
 */
export const SHELL_REAPER_ACCOUNT = 'sandbox-shell-reaper';

/**
 * The volumes the operator adds to a sandbox pod with the shell reaper (operator/sidecar/injection): reserved,
 * so a template can neither declare nor mount them (template-policy.ts) — a mount by name would hand the agent
 * the reaper's token or journal, or let it replace the socket.
 */
export const REAPER_VOLUMES = {
  socket: 'sandbox-reaper-socket',
  output: 'sandbox-reaper-output',
  state: 'sandbox-reaper-state',
  token: 'sandbox-reaper-token',
  tmp: 'sandbox-reaper-tmp',
} as const;

/**
 * On a namespace, set by an administrator (tenants cannot write namespaces): the runtime classes its
 * Sandboxes must use, comma-separated (e.g. `gvisor,kata`). An annotation, as a label value cannot hold a comma.
 */
export const RUNTIME_CLASSES_ANNOTATION = `${GROUP}/runtime-classes`;

export const ANNOTATIONS = {
  /**
   * On a Sandbox: it existed before the reference index (adopted). Its value says where from. Such a
   * sandbox has no marker until a legacy reconciliation completes.
   */
  adoptedFrom: `${GROUP}/adopted-from`,
  /**
   * On a Sandbox, set by an administrator: erase the reference index (delete every SessionReference of
   * the sandbox and clear the capacity latch). The value is the reason, which is logged and evented.
   */
  eraseReferences: `${GROUP}/erase-references`,
  /**
   * On a sandbox pod, set by an administrator: the admission policy lets this pod be deleted before an
   * exclusive verdict. The value is the reason; the API server's audit log records who set it.
   */
  deletionOverride: `${GROUP}/deletion-override`,
  /**
   * On a Sandbox, written by the operator before automatic cleanup deletes it, and before an administrator's
   * erase of its index: the fence an attach honours (like a deletionTimestamp), so an attach either is seen
   * by the consistent LIST that follows or is refused. The value is when the fence went up; the operator
   * lifts it when the sandbox turns out to be referenced, or once the erase is recorded.
   */
  cleanupFence: `${GROUP}/cleanup-fence`,
  /**
   * On a pool's Sandbox: the metadata.generation of the SandboxTemplate its blueprint was copied from, so a
   * Recreate pool knows which unclaimed sandboxes are stale.
   */
  templateGeneration: `${GROUP}/template-generation`,
} as const;
