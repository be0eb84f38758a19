/**
 * The CustomResourceDefinitions, built from the zod schemas (the one source of truth). `npm run crds`
 * writes them to crds/ and the chart; `npm run crds:check` (and a unit test) fail when they drift.
 */
import { SANDBOX, SESSION_REFERENCE } from './names.ts';
import { sandboxSpecSchema, sandboxStatusSchema, UNOBSERVED_STATUS } from './sandbox.ts';
import { sessionReferenceSpecSchema, sessionReferenceStatusSchema } from './session-reference.ts';
import { SANDBOX_NAME_MAX } from './limits.ts';
import { withPodSpec } from './pod-template-bounds.ts';

import { age, definition } from './crd-definition.ts';
import { sandboxClaimCrd, sandboxTemplateCrd, sandboxWarmPoolCrd } from './crd-warm-pools.ts';

export { sandboxClaimCrd, sandboxTemplateCrd, sandboxWarmPoolCrd };

export const sandboxCrd = definition({
  names: SANDBOX,
  description:
    'A sandbox for AI-agent sessions. Its pods are kept until the exclusivity decision says no session foreign ' +
    'to its worktree references it.',
  spec: sandboxSpecSchema,
  refineSpec: withPodSpec,
  status: sandboxStatusSchema,
  statusDefault: UNOBSERVED_STATUS,
  // The eviction guard's maxUnavailable: 0 is computed against the pods' controller's replicas, which the
  // disruption controller reads through /scale: without it every guard sits in SyncFailed (issue 27).
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.pods.total' },
  columns: [
    {
      name: 'Phase',
      type: 'string',
      jsonPath: '.status.phase',
      description: 'Pending, Running, Terminating or Blocked: a summary of the conditions.',
    },
    { name: 'Ready', type: 'string', jsonPath: '.status.ready', description: 'Ready pods / spec.replicas.' },
    { name: 'Worktree', type: 'string', jsonPath: '.spec.worktree', description: "The sandbox's worktree." },
    {
      name: 'Attached',
      type: 'integer',
      jsonPath: '.status.references.attached',
      description: 'Attached references.',
    },
    {
      name: 'Detached',
      type: 'integer',
      jsonPath: '.status.references.detached',
      description: 'Tombstones.',
    },
    {
      name: 'Foreign',
      type: 'integer',
      jsonPath: '.status.references.foreign',
      description: 'Foreign references.',
    },
    {
      name: 'Verdict',
      type: 'string',
      jsonPath: '.status.decision.verdict',
      description: 'Last exclusivity verdict.',
    },
    {
      name: 'Evidence',
      type: 'string',
      jsonPath: '.status.decision.evidence',
      description: 'What decided.',
      priority: 1,
    },
    {
      name: 'Marker',
      type: 'boolean',
      jsonPath: '.status.reconciliation.marker',
      description: 'Index trusted.',
      priority: 1,
    },
    age,
  ],
  selectableFields: ['.spec.worktree'],
  rootRules: [
    {
      rule: `self.metadata.name.size() <= ${SANDBOX_NAME_MAX}`,
      message: `metadata.name must be at most ${SANDBOX_NAME_MAX} characters: it labels the sandbox pods`,
    },
  ],
});

export const sessionReferenceCrd = definition({
  names: SESSION_REFERENCE,
  description:
    'Records that a session uses a sandbox (attached) or used it (detached: a tombstone). The sandbox is not ' +
    'destroyed while a reference foreign to its worktree remains.',
  spec: sessionReferenceSpecSchema,
  status: sessionReferenceStatusSchema,
  columns: [
    { name: 'Sandbox', type: 'string', jsonPath: '.spec.sandbox', description: 'The referenced Sandbox.' },
    { name: 'Session', type: 'string', jsonPath: '.spec.session', description: 'The session id.' },
    { name: 'Worktree', type: 'string', jsonPath: '.spec.worktree', description: "The session's worktree." },
    { name: 'Role', type: 'string', jsonPath: '.spec.role', description: 'Root, Subagent, Board or Ticket.' },
    { name: 'State', type: 'string', jsonPath: '.spec.state', description: 'Attached or Detached.' },
    {
      name: 'Turn',
      type: 'string',
      jsonPath: '.status.turn.phase',
      description: 'Phase of the latest turn.',
    },
    {
      name: 'Turn-ID',
      type: 'string',
      jsonPath: '.status.turn.id',
      description: 'The latest turn.',
      priority: 1,
    },
    { name: 'Route', type: 'string', jsonPath: '.spec.route', description: 'The attach route.', priority: 1 },
    age,
  ],
  selectableFields: ['.spec.sandbox', '.spec.session', '.spec.worktree', '.spec.state'],
  rootRules: [],
});

export const CRDS = [
  sandboxCrd,
  sessionReferenceCrd,
  sandboxTemplateCrd,
  sandboxWarmPoolCrd,
  sandboxClaimCrd,
] as const;
