/**
 * A live sandbox's network isolation (issue 26), re-established on every reconcile: the NetworkPolicy its
 * spec and its namespace call for (api/network-policy.ts), created, put back when someone deleted or changed
 * it, or — for an Unmanaged sandbox in a namespace that allows it — removed if the operator had made it.
 *
 * Fail closed: Unmanaged asked where no administrator allowed it is managed anyway, and the live turn creates
 * no pod before the policy stands. A setting that refuses the policy for good (RBAC, an admission policy) is
 * a misconfiguration said on the Sandbox, as for the eviction guard.
 */
import type { Logger } from 'pino';
import type { SandboxState } from '../api/objects.ts';
import { NETWORK_UNMANAGED_ALLOWED, NETWORK_UNMANAGED_LABEL } from '../api/network.ts';
import { desiredNetworkPolicy, effectiveManagement, networkPolicyName } from '../api/network-policy.ts';
import { controllerErrorOf, MisconfigurationError } from '../runtime/error-policy.ts';
import { KubeRequestError } from '../kube/errors.ts';
import type { ReconcilerContext } from './context.ts';

export type IsolationOutcome =
  /** The policy stands (or is not the operator's to keep): pods may be created. */
  { readonly kind: 'Kept' } | { readonly kind: 'Refused'; readonly error: MisconfigurationError };

/** The policy APIs (one per operator process) that have said the API server's slice is missing. */
const missingSliceSaid = new WeakSet<object>();

export async function keepNetworkIsolation(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  log: Logger,
): Promise<IsolationOutcome> {
  const api = ctx.ports.networkPolicies;
  if (api === undefined) return { kind: 'Kept' };
  const { namespace, name, uid } = sandbox.metadata;
  const identity = { namespace, name, uid: uid ?? '' };
  const policy = networkPolicyName(name);
  const network = sandbox.spec.network;
  try {
    const asked = network?.management === 'Unmanaged';
    const allowed = asked && (await api.unmanagedAllowed(namespace));
    if (effectiveManagement(network, allowed) === 'Unmanaged') {
      const removed = await api.removeOwned(identity);
      if (removed === 'Removed') log.info({ policy }, 'network Unmanaged: removed the NetworkPolicy');
      return { kind: 'Kept' };
    }
    const apiServer = await api.apiServerEndpoints();
    const result = await api.ensure(desiredNetworkPolicy(identity, network, apiServer, ctx.clusterDns));
    if (result === 'Created') log.info({ policy }, 'NetworkPolicy created');
    else if (result === 'Repaired')
      log.warn({ policy }, 'NetworkPolicy was missing or changed; re-established');
    // Said when the policy is written, not on every turn.
    if (result !== 'Unchanged' && asked)
      log.warn(
        { policy, label: `${NETWORK_UNMANAGED_LABEL}=${NETWORK_UNMANAGED_ALLOWED}` },
        'spec.network.management Unmanaged is not allowed in this namespace (no administrator label); the network stays managed',
      );
    // A control plane that keeps no such slice reaches its pods over the node's loopback only: their shell
    // reapers run on the host network, which no NetworkPolicy applies to (docs/security.md). A fact of the
    // cluster, not of one sandbox: said once, and again only after a slice was seen in between.
    if (apiServer.length > 0) missingSliceSaid.delete(api);
    else if (result !== 'Unchanged' && !missingSliceSaid.has(api)) {
      missingSliceSaid.add(api);
      log.warn(
        { policy },
        'no EndpointSlice default/kubernetes: the policies let no pod off the host network reach the API server ' +
          '(said once, until a slice is seen)',
      );
    }
    return { kind: 'Kept' };
  } catch (error) {
    if (error instanceof KubeRequestError && error.namespaceTerminating) {
      log.info({ policy }, 'namespace is terminating; the NetworkPolicy cannot be re-created');
      return { kind: 'Kept' };
    }
    const classified = controllerErrorOf(error);
    if (classified.kind !== 'Misconfigured') throw error;
    const { refused, fix } = classified.misconfiguration;
    return {
      kind: 'Refused',
      error: new MisconfigurationError(
        {
          reason: 'NetworkPolicyRefused',
          refused: `NetworkPolicy ${policy} refused: ${refused}`,
          fix: `${fix}; until then the sandbox's pods are not created`,
        },
        { cause: error },
      ),
    };
  }
}
