/** spec.network: bounded, structural, and no peer a tenant writes can re-open a blocked range. */
import { describe, expect, it } from 'vitest';
import { networkSchema } from '../../../operator/api/network.ts';

const peer = { podSelector: { matchLabels: { app: 'router' } } };

describe('spec.network', () => {
  it('is Managed when it says nothing', () =>
    expect(networkSchema.parse({})).toEqual({ management: 'Managed' }));

  it('takes in-cluster peers on numbered ports', () => {
    const network = { management: 'Managed', ingress: [{ from: [peer], ports: [{ port: 8080 }] }] };
    expect(networkSchema.parse(network).ingress?.[0]?.ports).toEqual([{ protocol: 'TCP', port: 8080 }]);
  });

  it('refuses a rule without peers: an empty from or to means everyone in a NetworkPolicy', () => {
    expect(networkSchema.safeParse({ ingress: [{ from: [] }] }).success).toBe(false);
    expect(networkSchema.safeParse({ egress: [{ ports: [{ port: 80 }] }] }).success).toBe(false);
  });

  it('refuses a peer that names neither pods nor namespaces', () =>
    expect(networkSchema.safeParse({ egress: [{ to: [{}] }] }).success).toBe(false));

  it('drops an ipBlock: a tenant cannot open the metadata address or a private range', () => {
    const parsed = networkSchema.parse({
      egress: [{ to: [{ ...peer, ipBlock: { cidr: '169.254.169.254/32' } }] }],
    });
    expect(parsed.egress?.[0]?.to).toEqual([peer]);
  });

  it('bounds the rules, the peers and the ports', () => {
    expect(
      networkSchema.safeParse({ ingress: Array.from({ length: 9 }, () => ({ from: [peer] })) }).success,
    ).toBe(false);
    expect(
      networkSchema.safeParse({ ingress: [{ from: Array.from({ length: 9 }, () => peer) }] }).success,
    ).toBe(false);
    expect(networkSchema.safeParse({ management: 'Open' }).success).toBe(false);
  });
});
