/** Everything a sandbox reconcile needs, injected: the cache, the ports, the legacy walk, limits and time. */
import type { Logger } from 'pino';
import type { IndexLimits } from '../api/limits.ts';
import type { Sandbox } from '../api/objects.ts';
import type { ReconciliationOutcome } from '../api/reconciliation-outcome.ts';
import type { Misconfigurations } from './misconfiguration.ts';
import type { SidecarSettings } from './pod-template.ts';
import type { ControllerPorts } from './ports.ts';
import type { StoreReader } from './store.ts';

/** Runs the bounded legacy walk for one sandbox against the configured ledger and locator. */
export interface LegacyWalk {
  run(sandbox: Sandbox, log: Logger): Promise<ReconciliationOutcome>;
}

export type DecisionRecorder = {
  readonly onDecision?: (verdict: string, evidence: string) => void;
  readonly onReconciliation?: (outcome: string) => void;
};

export type ReconcilerContext = {
  readonly store: StoreReader;
  readonly ports: ControllerPorts;
  /** Undefined when no session ledger is configured: adopted sandboxes then fail closed. */
  readonly legacy: LegacyWalk | undefined;
  readonly sidecar: SidecarSettings;
  readonly limits: IndexLimits;
  readonly now: () => Date;
  readonly timing: {
    /** Safety resync of every sandbox (a missed event never strands one). */
    readonly resyncMs: number;
    /** How often a blocked deletion is looked at again without an event. */
    readonly blockedRecheckMs: number;
    /** Minimum spacing of legacy walks for one sandbox (live / while deleting). */
    readonly legacyRetryMs: number;
    readonly legacyRetryWhileDeletingMs: number;
  };
  readonly recorder: DecisionRecorder;
  /** Refusals only a person can fix, as the runner met them: the status writer records them. */
  readonly misconfigurations: Misconfigurations;
};
