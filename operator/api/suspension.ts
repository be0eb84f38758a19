/**
 * Suspend and resume (issue 27): the fields that stop a sandbox's pods while the Sandbox, its references and
 * its guards stay, and the CEL rule that refuses a suspension that would lose the workspace.
 */
import { z } from 'zod';
import { IDLE_SECONDS_MAX, IDLE_SECONDS_MIN } from './limits.ts';

/** agent-sandbox v1beta1's name and values. */
export const OPERATING_MODES = ['Running', 'Suspended'] as const;
export type OperatingMode = (typeof OPERATING_MODES)[number];

/**
 * The only value: without a persistent workspace the workspace lives in the pods' filesystems, and a
 * suspension deletes it with them. `Ephemeral` says the platform accepts that.
 */
export const WORKSPACE_KINDS = ['Ephemeral'] as const;

/**
 * When the pods may be stopped without losing the workspace: one CEL expression over the Sandbox's spec, used by
 * every rule that stops them (suspension here, a drain's Reschedule in sandbox.ts). Either the workspace
 * lives on claims (spec.volumeClaimTemplates, volume-claims.ts) or the platform waived it.
 */
export const SUSPENSION_KEEPS_OR_WAIVES_WORKSPACE =
  '(has(self.volumeClaimTemplates) && size(self.volumeClaimTemplates) > 0) || ' +
  "(has(self.workspace) && self.workspace == 'Ephemeral')";

/** The CEL rules on `spec`: each names the field that suspends and the one that allows it. */
export const SUSPENSION_RULES = [
  {
    rule: `!has(self.operatingMode) || self.operatingMode != 'Suspended' || ${SUSPENSION_KEEPS_OR_WAIVES_WORKSPACE}`,
    message:
      "spec.operatingMode: Suspended deletes the sandbox's pods, and without spec.volumeClaimTemplates its " +
      'workspace lives in their filesystems: give it a persistent workspace, or set spec.workspace: Ephemeral to accept losing it',
  },
  {
    rule: `!has(self.idle) || ${SUSPENSION_KEEPS_OR_WAIVES_WORKSPACE}`,
    message:
      'spec.idle suspends an idle sandbox, deleting its pods, and without spec.volumeClaimTemplates its ' +
      'workspace lives in their filesystems: give it a persistent workspace, or set spec.workspace: Ephemeral to accept losing it',
  },
] as const;

export const operatingModeSchema = z
  .enum(OPERATING_MODES)
  .default('Running')
  .describe(
    "Running keeps the sandbox's pods; Suspended makes the operator delete them and create none, while the " +
      'Sandbox, its references, its finalizer and its eviction guard stay. Running again creates them again, ' +
      'under the same names, on the same claims. Suspended requires spec.volumeClaimTemplates or ' +
      'spec.workspace: Ephemeral.',
  );

export const workspaceSchema = z
  .enum(WORKSPACE_KINDS)
  .optional()
  .describe(
    'Ephemeral: the platform accepts that suspending the sandbox (spec.operatingMode: Suspended, spec.idle) ' +
      "loses its workspace, which lives in its pods' filesystems. Absent: suspension is refused unless " +
      'spec.volumeClaimTemplates keeps the workspace on claims.',
  );

export const idleSchema = z
  .object({
    suspendAfterSeconds: z
      .int32()
      .min(IDLE_SECONDS_MIN)
      .max(IDLE_SECONDS_MAX)
      .describe(
        'Seconds with no Attached SessionReference (only tombstones, or none) after which the operator ' +
          'suspends the sandbox; an attach resumes it. Never while the reference index is overflowed.',
      ),
    whenNoTurnRunning: z
      .boolean()
      .optional()
      .describe(
        "True: an Attached reference counts only while its session's turn is Running (status.turn, written " +
          'by the agent host), so the sandbox is also suspended once no attached session has a turn running; ' +
          'a turn that starts resumes it.',
      ),
  })
  .describe(
    'Idle by references: suspend the sandbox while no session is attached. Requires spec.workspace: Ephemeral.',
  );
export type IdlePolicy = z.infer<typeof idleSchema>;
