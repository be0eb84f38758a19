/**
 * Leader election on a coordination.k8s.io Lease, with client-go's defaults (lease 15 s, renew deadline 10 s,
 * retry 2 s). Only the leader reconciles. Losing the lease ends leadership at once (the caller exits, as
 * controller-runtime does); a graceful stop releases the lease so a standby takes over without waiting.
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import { sleep } from './sleep.ts';
import { KubeRequestError, request } from '../kube/errors.ts';
import type { KubeClients } from '../kube/clients.ts';
import { segment } from '../kube/plain-json.ts';
import { LeaseLostError } from './error-policy.ts';
import { forbiddenMisconfiguration } from './forbidden.ts';

export type LeaseSettings = {
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
};

export const DEFAULT_LEASE_TIMING = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const;

const micro = (date: Date) => date.toISOString().replace('Z', '000Z');

// The Lease fields election reads; the rest of the object is kept as read, for the PUT that replaces it.
const leaseSchema = z.looseObject({
  metadata: z.looseObject({ resourceVersion: z.string().optional() }),
  spec: z
    .looseObject({
      holderIdentity: z.string().optional(),
      renewTime: z.string().optional(),
      acquireTime: z.string().optional(),
      leaseDurationSeconds: z.number().optional(),
      leaseTransitions: z.number().optional(),
    })
    .optional(),
});
type Lease = z.infer<typeof leaseSchema>;

export class LeaderElector {
  private lastRenew = 0;
  /** Why the last acquire/renew attempt failed: the cause a lost lease reports. */
  private lastFailure: unknown = undefined;
  /** A 403 on the Lease was said (once, with its fix) and has not cleared yet. */
  private refused = false;
  constructor(
    private readonly clients: KubeClients,
    private readonly lease: LeaseSettings,
    private readonly log: Logger,
  ) {}

  /** Resolves once this replica holds the lease (or never, if `signal` aborts first: then it resolves false). */
  async acquire(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew()) {
        this.log.info(
          { lease: `${this.lease.namespace}/${this.lease.name}`, identity: this.lease.identity },
          'became leader',
        );
        return true;
      }
      await sleep(this.lease.retryPeriodMs, signal);
    }
    return false;
  }

  /** Renews until `signal` aborts (resolves) or the renew deadline passes without success (rejects). */
  async hold(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (await sleep(this.lease.retryPeriodMs, signal)) return;
      if (await this.tryAcquireOrRenew()) continue;
      if (Date.now() - this.lastRenew > this.lease.renewDeadlineMs) {
        throw new LeaseLostError(`${this.lease.namespace}/${this.lease.name}`, this.lease.renewDeadlineMs, {
          cause: this.lastFailure,
        });
      }
    }
  }

  /** Gives the lease up (best effort) so a standby need not wait for it to expire. */
  async release(): Promise<void> {
    try {
      const current = await this.read();
      if (current?.spec?.holderIdentity !== this.lease.identity) return;
      await this.replace({
        ...current,
        spec: { ...current.spec, holderIdentity: '', leaseDurationSeconds: 1 },
      });
      this.log.info('released the leader lease');
    } catch (error) {
      this.log.warn({ err: error }, 'could not release the leader lease; it expires by itself');
    }
  }

  private leases(name?: string): string {
    const collection = `/apis/coordination.k8s.io/v1/namespaces/${segment(this.lease.namespace)}/leases`;
    return name === undefined ? collection : `${collection}/${segment(name)}`;
  }

  private async read(): Promise<Lease | undefined> {
    let answer: unknown;
    try {
      answer = await request('Lease', this.lease.name, () =>
        this.clients.json({ method: 'GET', path: this.leases(this.lease.name) }),
      );
    } catch (error) {
      if (error instanceof KubeRequestError && error.notFound) return undefined;
      throw error;
    }
    const lease = leaseSchema.safeParse(answer);
    if (!lease.success)
      throw new Error(`lease ${this.lease.namespace}/${this.lease.name} is unreadable`, {
        cause: lease.error,
      });
    return lease.data;
  }

  /** PUT of the whole Lease: its resourceVersion guards the race with another replica. */
  private async replace(lease: Lease): Promise<void> {
    const { namespace, name } = this.lease;
    await request('Replace', `lease ${namespace}/${name}`, () =>
      this.clients.json({ method: 'PUT', path: this.leases(name), body: lease }),
    );
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = new Date();
    const { namespace, name, identity, leaseDurationMs } = this.lease;
    const spec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(leaseDurationMs / 1000),
      renewTime: micro(now),
    };
    try {
      const current = await this.read();
      if (!current) {
        await request('Create', `lease ${namespace}/${name}`, () =>
          this.clients.json({
            method: 'POST',
            path: this.leases(),
            body: {
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              metadata: { name, namespace },
              spec: { ...spec, acquireTime: micro(now), leaseTransitions: 0 },
            },
          }),
        );
      } else {
        const holder = current.spec?.holderIdentity ?? '';
        const renewed = current.spec?.renewTime ? new Date(current.spec.renewTime).getTime() : 0;
        const expired = renewed + (current.spec?.leaseDurationSeconds ?? 0) * 1000 < now.getTime();
        if (holder !== '' && holder !== identity && !expired) {
          this.lastFailure = new Error(`the lease is held by ${holder}`);
          return false;
        }
        const transitions = (current.spec?.leaseTransitions ?? 0) + (holder === identity ? 0 : 1);
        const acquireTime = holder === identity ? current.spec?.acquireTime : micro(now);
        await this.replace({
          ...current,
          spec: { ...current.spec, ...spec, acquireTime, leaseTransitions: transitions },
        });
      }
      this.lastRenew = now.getTime();
      this.lastFailure = undefined;
      if (this.refused) {
        this.refused = false;
        this.log.info({ lease: `${namespace}/${name}` }, 'the leader lease is allowed again');
      }
      return true;
    } catch (error) {
      this.lastFailure = error;
      this.sayFailure(error);
      return false;
    }
  }

  private sayFailure(error: unknown): void {
    const lease = `${this.lease.namespace}/${this.lease.name}`;
    if (!(error instanceof KubeRequestError && error.status === 403)) {
      // A leader that cannot renew is on its way to losing the lease: say so while there is still time.
      this.log.warn({ err: error, lease }, 'lease acquire/renew attempt failed');
      return;
    }
    if (this.refused) {
      this.log.debug({ lease }, 'the leader lease is still refused');
      return;
    }
    // A permission only a person can grant: said once with its fix, retried at the retry period meanwhile.
    this.refused = true;
    this.log.error(
      { err: error, lease, ...forbiddenMisconfiguration(error) },
      'the leader lease is refused by a setting only a person can change; this replica cannot lead until it is',
    );
  }
}
