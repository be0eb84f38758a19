/**
 * What the soak's API server records: every write to Sandboxes, SessionReferences, pods (and their
 * evictions), PodDisruptionBudgets and namespaces, with request and response bodies where an invariant
 * reads them (the deleted object's state, a pod's labels at creation). Reads, status writes, leases,
 * events and nodes are not recorded: they decide nothing and would dominate the log.
 */
const WRITES = ['create', 'update', 'patch', 'delete', 'deletecollection'];

export const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    verbs: [get, list, watch]
  - level: None
    resources:
      - group: sandbox.agents.dev
        resources: [sandboxes/status, sessionreferences/status]
      - group: ""
        resources: [pods/status, pods/binding]
  - level: RequestResponse
    verbs: ${JSON.stringify(WRITES)}
    resources:
      - group: sandbox.agents.dev
        resources: [sandboxes, sessionreferences]
      - group: ""
        resources: [pods, pods/eviction]
  - level: Metadata
    verbs: ${JSON.stringify(WRITES)}
    resources:
      - group: policy
        resources: [poddisruptionbudgets]
      - group: ""
        resources: [namespaces, namespaces/finalize]
  - level: None
`;
