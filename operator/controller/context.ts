/** Everything a sandbox reconcile needs, injected: the cache, the ports, the legacy walk, limits and time. */
import type { Logger } from 'pino';
import type { IndexLimits } from '../api/limits.ts';
import type { ClusterDns } from '../api/network-policy.ts';
import type { Misconfigurations } from './misconfiguration.ts';
import type { SidecarSettings } from './pod-template.ts';
import type { ControllerPorts, LegacyWalks } from './ports.ts';
import type { StoreReader } from './cache/store.ts';
import type { NodeDrain } from './cache/node-drains.ts';

export type DecisionRecorder = {
  readonly onDecision?: (verdict: string, evidence: string) => void;
};

export type ReconcilerContext = {
  readonly store: StoreReader;
  readonly ports: ControllerPorts;
  /**
   * The legacy walks' lane (walk-lane/lane.ts): a turn starts a walk there and never waits for it. Undefined
   * when no session ledger is configured: adopted sandboxes then fail closed.
   */
  readonly legacy: LegacyWalks | undefined;
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
    /** Waits between attempts of a late erase; absent: deletion/late-references.ts's LATE_ERASE_RETRY_MS. */
    readonly lateEraseRetryMs?: readonly number[];
  };
  readonly recorder: DecisionRecorder;
  /** Refusals only a person can fix, as the runner met them: the status writer records them. */
  readonly misconfigurations: Misconfigurations;
  /**
   * The per-namespace opt-in (cache/managed-namespaces.ts): whether the operator leaves a namespace's Sandboxes
   * alone (and says so once); absent without `--managed-namespace-label`, when every namespace is managed.
   */
  readonly unmanaged?: { readonly skips: (namespace: string, log: Logger) => boolean };
  /**
   * Which sandbox names have a workspace claim holding our finalizer (cache/held-claims.ts); absent in tests of
   * other rules, where no claim is held.
   */
  readonly claims?: { readonly holds: (sandboxKey: string) => boolean };
  /** The DNS the network policies let sandboxes reach (`--cluster-dns`); absent: kube-system's kube-dns. */
  readonly clusterDns?: ClusterDns;
  /** Which nodes are being drained (cache/node-drains.ts); absent where Nodes are not watched. */
  readonly nodes?: { readonly drainOf: (node: string) => NodeDrain | undefined };
  /** Called right after each deletion step writes: crash tests' failpoints (deletion/failpoints.ts), else a no-op. */
  readonly failpoint: (step: string) => void;
};
