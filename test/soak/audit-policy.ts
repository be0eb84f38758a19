/**
 * What the soak's API server records: every write to Sandboxes (their status included: the decision, the
 * erase recorded), SessionReferences, pods (and their evictions), PodDisruptionBudgets and namespaces, with
 * workspace claims' writes (who deleted which, when), issue 28's sandbox claims (their status: what was bound,
 * warm or cold), templates (their generation) and pools (resizes, through /scale too), a Sandbox's /scale
 * writes (whose were stored), with request and response bodies where an invariant reads them (the deleted object's state, a pod's labels at
 * creation, a Sandbox's annotations and status at each version); every pod status write with its answer (the
 * phase: an eviction of a pod that had not started skips its budget, evictions.ts); the users' status writes
 * to budgets (the protected writes the soak attempts); and the operator's Events (LateReferencesErased).
 * Reads, reference status writes, leases, nodes and everyone else's status writes and Events are not
 * recorded: they decide nothing and would dominate the log.
 */
const WRITES = ['create', 'update', 'patch', 'delete', 'deletecollection'];

export type AuditUsers = {
  /** The soak's users (and kwok, which writes pod status as the same admin). */
  readonly admin: string;
  readonly operator: string;
};

export function auditPolicy(users: AuditUsers): string {
  return `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    verbs: [get, list, watch]
  - level: RequestResponse
    verbs: ${JSON.stringify(WRITES)}
    resources:
      - group: sandbox.agents.dev
        resources: [sandboxes/status]
  - level: RequestResponse
    verbs: ${JSON.stringify(WRITES)}
    resources:
      - group: ""
        resources: [pods/status]
  - level: Metadata
    verbs: ${JSON.stringify(WRITES)}
    users: [${JSON.stringify(users.admin)}]
    resources:
      - group: policy
        resources: [poddisruptionbudgets/status]
  - level: Request
    verbs: [create]
    users: [${JSON.stringify(users.operator)}]
    resources:
      - group: ""
        resources: [events]
  - level: None
    resources:
      - group: sandbox.agents.dev
        resources: [sessionreferences/status, sandboxwarmpools/status]
      - group: ""
        resources: [pods/binding, events]
      - group: policy
        resources: [poddisruptionbudgets/status]
  - level: RequestResponse
    verbs: ${JSON.stringify(WRITES)}
    resources:
      - group: sandbox.agents.dev
        resources: [sandboxes, sessionreferences, sandboxclaims, sandboxclaims/status, sandboxtemplates]
      - group: ""
        resources: [pods, pods/eviction]
  - level: Metadata
    verbs: ${JSON.stringify(WRITES)}
    resources:
      - group: policy
        resources: [poddisruptionbudgets]
      - group: sandbox.agents.dev
        resources: [sandboxwarmpools, sandboxwarmpools/scale, sandboxes/scale]
      - group: ""
        resources: [namespaces, namespaces/finalize, persistentvolumeclaims]
  - level: None
`;
}
