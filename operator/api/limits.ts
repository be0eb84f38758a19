/**
 * Field and capacity limits. They are part of the schema (the API server enforces them) and of the
 * reference index (the controller enforces them), and both read them from here.
 */

/** Session ids (`workspace_123`, `agent_…`): bounded so 512 references fit the byte budget. */
export const SESSION_ID_MAX = 128;
export const WORKTREE_ID_MAX = 128;
/** The route recorded with an attach, e.g. `shared-control-v1/wt-1/…`. */
export const ROUTE_MAX = 512;
export const PROVIDER_MAX = 63;
/** Sandbox names label their pods, so they are DNS labels. */
export const SANDBOX_NAME_MAX = 63;
export const TURN_ID_MAX = 128;
export const MESSAGE_MAX = 1024;
/**
 * metav1.Condition's own bounds, so a third-party writer (a policy engine, a GitOps health check) that follows
 * them is never refused: type up to 316 with an optional domain prefix, reason 1024, message 32768.
 */
export const CONDITION_TYPE_MAX = 316;
export const CONDITION_REASON_MAX = 1024;
export const CONDITION_MESSAGE_MAX = 32768;
export const CONDITION_TYPE_PATTERN =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$';
export const CONDITION_REASON_PATTERN = '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$';
export const PODS_MAX = 8;
export const LABELS_MAX = 64;
export const ANNOTATIONS_MAX = 64;
/** A template label or annotation key: a Kubernetes qualified name with its prefix (253 + '/' + 63). */
export const MAP_KEY_MAX = 317;
export const MAP_VALUE_MAX = 4096;
export const CONDITIONS_MAX = 16;
/** Blocking references named in status, Events and logs; the count says how many there were in all. */
export const BLOCKING_REFERENCES_MAX = 16;
export const TTL_SECONDS_MAX = 30 * 24 * 3600;
export const REAPER_GRACE_SECONDS_MAX = 300;
/** spec.idle.suspendAfterSeconds: at least a few seconds (a detach and re-attach must not suspend), at most 30 days. */
export const IDLE_SECONDS_MIN = 5;
export const IDLE_SECONDS_MAX = 30 * 24 * 3600;
/** The longest a drain waits on a Running turn before the operator moves the sandbox's pod (issue 27). */
export const DISRUPTION_HOLD_SECONDS_MAX = 3600;

/**
 * spec.replicas of a SandboxWarmPool: bounded, so a typo (or a runaway autoscaler through /scale) cannot ask
 * for sandboxes by the million; 1,000 is the burst (issue 28).
 */
export const WARM_POOL_REPLICAS_MAX = 1000;
/** A pool's sandboxes are named `<pool>-<5 random>` and must stay DNS labels (SANDBOX_NAME_MAX). */
export const POOL_SANDBOX_SUFFIX_LENGTH = 5;
export const WARM_POOL_NAME_MAX = SANDBOX_NAME_MAX - 1 - POOL_SANDBOX_SUFFIX_LENGTH;
/** Template and sandbox claim names are label values on the sandboxes. */
export const LABEL_VALUE_MAX = 63;

/** Per-sandbox capacity of the reference index (README, "Capacity"): beyond either, the index is overflowed. */
export const INDEX_LIMITS = {
  maxReferences: 512,
  maxBytes: 96 * 1024,
} as const;
export type IndexLimits = { readonly maxReferences: number; readonly maxBytes: number };

/** Identifiers: start and end alphanumeric; inside also `._:-` (session ids use `_`). */
export const IDENTIFIER_PATTERN = '^[A-Za-z0-9]([A-Za-z0-9._:-]*[A-Za-z0-9])?$';
/** Kubernetes object names (DNS subdomain, as the API server checks them). */
export const DNS_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
export const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

/**
 * Bounds of a Sandbox's pod template (issue 26, #5): the vendored PodSpec (pod-spec.schema.json) has none, so
 * pod-template-bounds.ts puts these on every string, list and map in it. Text a container runs or reads
 * (command, args, an env value) may hold a script or a certificate chain; everything else is a name, a path
 * or a short value. The template's total stays bounded by the API server's object limit (1.5 MiB in etcd),
 * which is why the operator's cache never holds the template (docs/security.md, "Memory").
 */
export const TEMPLATE_STRING_MAX = 4096;
export const TEMPLATE_TEXT_MAX = 32 * 1024;
export const TEMPLATE_LIST_MAX = 64;
/** Environment variables and command or argument words of one container. */
export const TEMPLATE_LONG_LIST_MAX = 256;
export const TEMPLATE_MAP_MAX = 64;
