/**
 * A Sandbox's network isolation (issue 26, "Network isolation by default"): `spec.network`. Absent or
 * `management: Managed`, the operator keeps one NetworkPolicy over the sandbox's pods (network-policy.ts):
 * ingress from nothing but the peers listed here, egress to the public internet, cluster DNS and the API
 * server only. `Unmanaged` leaves the pods' network to the namespace's own policies, and counts only in a
 * namespace an administrator labelled `sandbox.agents.dev/network-unmanaged=allowed` (tenants with `edit`
 * cannot label namespaces); elsewhere the operator keeps managing (fail closed).
 *
 * The peers a tenant may add are in-cluster pods only (pod and namespace selectors, never an ipBlock): an
 * ipBlock would re-open the metadata address and the private ranges the default closes. Every rule names its
 * peers (an empty `from`/`to` means "everyone" in a NetworkPolicy, so it is refused).
 */
import { z } from 'zod';
import { GROUP } from './names.ts';

export const NETWORK_MANAGEMENT = ['Managed', 'Unmanaged'] as const;
export type NetworkManagement = (typeof NETWORK_MANAGEMENT)[number];

/** On a namespace, set by an administrator: its Sandboxes may ask for `management: Unmanaged`. */
export const NETWORK_UNMANAGED_LABEL = `${GROUP}/network-unmanaged`;
export const NETWORK_UNMANAGED_ALLOWED = 'allowed';

export const NETWORK_RULES_MAX = 8;
export const NETWORK_PEERS_MAX = 8;
export const NETWORK_PORTS_MAX = 8;
const SELECTOR_TERMS_MAX = 8;
const SELECTOR_VALUES_MAX = 16;
const LABEL_KEY_MAX = 317;
const LABEL_VALUE_MAX = 63;

const labelSelector = (description: string) =>
  z
    .object({
      matchLabels: z
        .record(z.string().min(1).max(LABEL_KEY_MAX), z.string().max(LABEL_VALUE_MAX))
        .refine((map) => Object.keys(map).length <= SELECTOR_TERMS_MAX, {
          message: `must have at most ${SELECTOR_TERMS_MAX} entries`,
        })
        .meta({
          maxProperties: SELECTOR_TERMS_MAX,
          'x-kubernetes-validations': [
            {
              rule: `self.all(k, size(k) >= 1 && size(k) <= ${LABEL_KEY_MAX})`,
              message: `every key must have 1 to ${LABEL_KEY_MAX} characters`,
            },
          ],
        })
        .optional()
        .describe('Labels the selected objects carry, all of them.'),
      matchExpressions: z
        .array(
          z.object({
            key: z.string().min(1).max(LABEL_KEY_MAX).describe('The label key.'),
            operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']).describe('How the key is matched.'),
            values: z
              .array(z.string().max(LABEL_VALUE_MAX))
              .max(SELECTOR_VALUES_MAX)
              .optional()
              .describe('The values, for In and NotIn.'),
          }),
        )
        .max(SELECTOR_TERMS_MAX)
        .optional()
        .describe('Label requirements, all of them.'),
    })
    .describe(description);

const peerSchema = z
  .object({
    podSelector: labelSelector(
      "The pods selected (in the sandbox's namespace, or in the namespaces namespaceSelector selects).",
    ).optional(),
    namespaceSelector: labelSelector(
      'The namespaces selected (their pods, all or podSelector’s).',
    ).optional(),
  })
  .refine((peer) => peer.podSelector !== undefined || peer.namespaceSelector !== undefined, {
    message: 'a peer names a podSelector, a namespaceSelector or both',
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: 'has(self.podSelector) || has(self.namespaceSelector)',
        message: 'a peer names a podSelector, a namespaceSelector or both',
      },
    ],
  })
  .describe('In-cluster pods (a NetworkPolicyPeer without ipBlock).');

const portSchema = z
  .object({
    protocol: z.enum(['TCP', 'UDP', 'SCTP']).default('TCP').describe('The protocol; TCP when absent.'),
    port: z.int32().min(1).max(65535).optional().describe('The port number; every port when absent.'),
    endPort: z.int32().min(1).max(65535).optional().describe('The last port of a range starting at port.'),
  })
  .describe('A NetworkPolicyPort, by number.');

const peers = (description: string) =>
  z.array(peerSchema).min(1).max(NETWORK_PEERS_MAX).describe(description);
const ports = z
  .array(portSchema)
  .max(NETWORK_PORTS_MAX)
  .optional()
  .describe('The ports the rule opens; every port when absent.');

export const networkSchema = z
  .object({
    management: z
      .enum(NETWORK_MANAGEMENT)
      .default('Managed')
      .describe(
        "Managed (default): the operator keeps a NetworkPolicy over the sandbox's pods: ingress only from the " +
          'peers below, egress to the public internet (private ranges, 100.64.0.0/10 and the metadata range ' +
          'blocked), cluster DNS and the API server. Unmanaged: no such policy; honoured only in a namespace ' +
          `an administrator labelled ${NETWORK_UNMANAGED_LABEL}=${NETWORK_UNMANAGED_ALLOWED}.`,
      ),
    ingress: z
      .array(z.object({ from: peers('The pods that may connect.'), ports }))
      .max(NETWORK_RULES_MAX)
      .optional()
      .describe('Who may connect to the sandbox pods; nobody when absent.'),
    egress: z
      .array(z.object({ to: peers('The pods the sandbox may connect to.'), ports }))
      .max(NETWORK_RULES_MAX)
      .optional()
      .describe('In-cluster pods the sandbox may reach besides the public internet, DNS and the API server.'),
  })
  .describe("The sandbox's network isolation (a NetworkPolicy the operator manages).");
export type SandboxNetwork = z.infer<typeof networkSchema>;
