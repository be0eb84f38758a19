/** The CRDs of warm pools (docs/warm-pools.md): SandboxTemplate, SandboxWarmPool and SandboxClaim. */
import { SANDBOX_CLAIM, SANDBOX_TEMPLATE, SANDBOX_WARM_POOL } from './names.ts';
import { LABEL_VALUE_MAX, WARM_POOL_NAME_MAX } from './limits.ts';
import { withPodSpec } from './pod-template-bounds.ts';
import { sandboxTemplateSpecSchema } from './sandbox-template.ts';
import { sandboxWarmPoolSpecSchema, sandboxWarmPoolStatusSchema } from './sandbox-warm-pool.ts';
import { sandboxClaimSpecSchema, sandboxClaimStatusSchema } from './sandbox-claim.ts';
import { age, definition, type Rule } from './crd-definition.ts';

/** What a GET returns as status before the operator wrote one: kstatus reads InProgress (docs/health.md). */
const UNOBSERVED = { observedGeneration: 0 } as const;

/** Template and sandbox claim names are label values on the sandboxes. */
const labelValueName = (kind: string): Rule => ({
  rule: `self.metadata.name.size() <= ${LABEL_VALUE_MAX}`,
  message: `metadata.name must be at most ${LABEL_VALUE_MAX} characters: it labels the ${kind}'s sandboxes`,
});

export const sandboxTemplateCrd = definition({
  names: SANDBOX_TEMPLATE,
  description:
    "A sandbox's blueprint. Warm pools and sandbox claims make Sandboxes from it, each with a copy, so a " +
    'change alters no existing sandbox.',
  spec: sandboxTemplateSpecSchema,
  refineSpec: withPodSpec,
  columns: [
    { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', description: 'Pods per sandbox.' },
    {
      name: 'Cleanup',
      type: 'string',
      jsonPath: '.spec.cleanup.policy',
      description: "The sandboxes' cleanup policy.",
    },
    age,
  ],
  selectableFields: [],
  rootRules: [labelValueName('template')],
});

export const sandboxWarmPoolCrd = definition({
  names: SANDBOX_WARM_POOL,
  description:
    'Keeps spec.replicas ready, unclaimed Sandboxes made from a SandboxTemplate, for sandbox claims to bind. ' +
    'A pool never touches a claimed sandbox.',
  spec: sandboxWarmPoolSpecSchema,
  status: sandboxWarmPoolStatusSchema,
  statusDefault: UNOBSERVED,
  scale: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.status.selector',
  },
  columns: [
    {
      name: 'Template',
      type: 'string',
      jsonPath: '.spec.templateRef.name',
      description: 'The SandboxTemplate.',
    },
    { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas', description: 'Sandboxes to keep.' },
    {
      name: 'Current',
      type: 'integer',
      jsonPath: '.status.replicas',
      description: 'Unclaimed sandboxes that exist.',
    },
    {
      name: 'Ready',
      type: 'integer',
      jsonPath: '.status.readyReplicas',
      description: 'Unclaimed sandboxes that are Ready.',
    },
    {
      name: 'Strategy',
      type: 'string',
      jsonPath: '.spec.updateStrategy.type',
      description: 'OnReplenish or Recreate.',
      priority: 1,
    },
    age,
  ],
  selectableFields: ['.spec.templateRef.name'],
  rootRules: [
    {
      rule: `self.metadata.name.size() <= ${WARM_POOL_NAME_MAX}`,
      message:
        `metadata.name must be at most ${WARM_POOL_NAME_MAX} characters: the pool's sandboxes are named ` +
        '<pool>-<5 random characters>, at most 63',
    },
  ],
});

export const sandboxClaimCrd = definition({
  names: SANDBOX_CLAIM,
  description:
    "A session's request for a sandbox from a warm pool (or, cold, from a template). The operator binds one " +
    "and creates the session's SessionReference to it in the same step.",
  spec: sandboxClaimSpecSchema,
  status: sandboxClaimStatusSchema,
  statusDefault: UNOBSERVED,
  columns: [
    { name: 'Pool', type: 'string', jsonPath: '.spec.warmPoolRef.name', description: 'The SandboxWarmPool.' },
    {
      name: 'Template',
      type: 'string',
      jsonPath: '.spec.templateRef.name',
      description: 'The SandboxTemplate of a cold claim.',
      priority: 1,
    },
    { name: 'Session', type: 'string', jsonPath: '.spec.session', description: 'The session id.' },
    { name: 'Sandbox', type: 'string', jsonPath: '.status.sandbox', description: 'The bound Sandbox.' },
    { name: 'Launch', type: 'string', jsonPath: '.status.launchType', description: 'Warm or Cold.' },
    {
      name: 'Ready',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="Ready")].status',
      description: 'The bound sandbox is Ready.',
    },
    age,
  ],
  selectableFields: ['.spec.session'],
  rootRules: [labelValueName('sandbox claim')],
});
