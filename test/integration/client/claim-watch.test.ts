/**
 * claim() against the real API server, without an operator: the test writes the claim's status as the
 * operator's binding does, so it decides when Ready appears. claim() watches its one claim from the version
 * its create answered and returns on the event that makes it Ready, reading nothing; a watch that ends is
 * opened again from the last version it saw, one that expires (410) is replaced by a read and a watch from the
 * version read; at the deadline it fails saying what the Bound condition said; a deleted claim fails at once.
 * A fault proxy (../conformance/fault-proxy.ts) in front of the API server records the requests and ends or
 * expires the watches.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, SANDBOX_CLAIM, VERSION } from '../../../operator/api/names.ts';
import { SandboxClaimNotReadyError, SandboxClaims } from '../../../operator/client/sandbox-claims.ts';
import { eventually, pending } from '../../harness/eventually.ts';
import { JSON_PATCH, kubeConfig, testNamespace } from '../../harness/kube.ts';
import { customObjects } from '../controller/operator.ts';
import { startFaultProxy, type FaultProxy, type Faults } from '../conformance/fault-proxy.ts';

const namespace = testNamespace('claim-watch');
const objects = { group: GROUP, version: VERSION, namespace, plural: SANDBOX_CLAIM.plural };
let directory: string;
let proxies: FaultProxy[] = [];

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'claim-watch-'));
});
afterEach(async () => {
  await Promise.all(proxies.map((proxy) => proxy.close()));
  proxies = [];
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

const request = (name: string) => ({
  namespace,
  name,
  session: `workspace_${name.replaceAll('-', '_')}`,
  worktree: 'wt-1',
  route: `shared-control-v1/${name}`,
  role: 'Root' as const,
  warmPoolRef: { name: 'pool' },
});

const condition = (type: string, status: string, reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
});

const bound = (name: string) => ({
  sandbox: `pool-${name}`,
  reference: `pool-${name}-0123456789abcdef`,
  launchType: 'Warm',
});

/** Writes the claim's whole status, as the operator's binding does. */
async function writeStatus(name: string, status: object): Promise<void> {
  await customObjects().patchNamespacedCustomObjectStatus(
    { ...objects, name, body: [{ op: 'add', path: '/status', value: status }] },
    JSON_PATCH,
  );
}

const waitingStatus = (name: string) => ({
  ...bound(name),
  conditions: [
    condition('Bound', 'True', 'WarmSandboxBound', `bound to pool-${name}`),
    condition('Ready', 'False', 'SandboxNotReady', 'the sandbox is starting'),
  ],
});
const readyStatus = (name: string) => ({
  ...bound(name),
  conditions: [
    condition('Bound', 'True', 'WarmSandboxBound', `bound to pool-${name}`),
    condition('Ready', 'True', 'SandboxReady', 'ready'),
  ],
});

type Seen = { method: string; url: URL };

/** A proxy that records every request (and the versions its creates and reads answered), with `faults`. */
async function recorded(faults: Omit<Faults, 'hold' | 'rewrite'> = {}) {
  const requests: Seen[] = [];
  const answered: string[] = [];
  const arrivals: (() => void)[] = [];
  const proxy = await startFaultProxy(kubeConfig(), directory, () => ({
    ...faults,
    hold: (method, url) => {
      requests.push({ method, url: new URL(url, 'http://proxy') });
      arrivals.splice(0).forEach((arrived) => arrived());
      return undefined;
    },
    rewrite: (method, url, body) => {
      if (url.includes(`/${SANDBOX_CLAIM.plural}`)) {
        const version = (JSON.parse(body) as { metadata?: { resourceVersion?: string } }).metadata
          ?.resourceVersion;
        answered.push(`${method} ${version ?? '?'}`);
      }
      return undefined;
    },
  }));
  proxies.push(proxy);
  const config = new KubeConfig();
  config.loadFromFile(proxy.kubeconfigPath);
  const watches = () => requests.filter((r) => r.url.searchParams.get('watch') === 'true');
  /** Resolves once `count` watches have arrived at the proxy. */
  const watchesArrived = async (count: number) => {
    while (watches().length < count) await new Promise<void>((resolve) => arrivals.push(resolve));
  };
  return { claims: new SandboxClaims(config), requests, answered, watches, watchesArrived };
}

describe('claim() watches its claim', () => {
  it('returns once the binding writes Ready, seen through its one watch from the create’s version', async () => {
    const proxy = await recorded();
    const claimed = proxy.claims.claim(request('prompt'), { deadlineMs: 30_000 });
    await proxy.watchesArrived(1);
    await writeStatus('prompt', waitingStatus('prompt'));
    const written = performance.now();
    await writeStatus('prompt', readyStatus('prompt'));
    const result = await claimed;
    const afterReady = performance.now() - written;
    expect(result).toEqual({ claim: 'prompt', ...bound('prompt') });
    // One create, one watch of this claim alone from the version the create answered, and no read.
    const [created] = proxy.answered;
    expect(proxy.requests.map((r) => `${r.method} ${r.url.pathname}`)).toEqual([
      `POST /apis/${GROUP}/${VERSION}/namespaces/${namespace}/${SANDBOX_CLAIM.plural}`,
      `GET /apis/${GROUP}/${VERSION}/namespaces/${namespace}/${SANDBOX_CLAIM.plural}`,
    ]);
    const [watch] = proxy.watches();
    expect(watch?.url.searchParams.get('fieldSelector')).toBe('metadata.name=prompt');
    expect(`POST ${watch?.url.searchParams.get('resourceVersion') ?? ''}`).toBe(created);
    expect(afterReady).toBeLessThan(2_000);
    process.stderr.write(`[claim-watch] Ready written → claim() returned: ${afterReady.toFixed(1)} ms\n`);
  });

  it('a watch that ends is opened again from the last version; an expired one (410) reads the claim first', async () => {
    let watchesSeen = 0;
    let firstStream = '';
    const expired = JSON.stringify({
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'Expired',
        message: 'too old resource version',
        code: 410,
      },
    });
    const proxy = await recorded({
      // The second watch expires as the API server says so: a 200 whose one event is an ERROR of 410.
      answer: (_method, url) =>
        url.includes('watch=true') && ++watchesSeen === 2 ? { status: 200, body: `${expired}\n` } : undefined,
      // The first watch ends cleanly once it delivered the claim's first change, whole.
      endAfter: (_url, chunk) => {
        if (watchesSeen !== 1) return false;
        firstStream += chunk;
        return firstStream.includes('"MODIFIED"') && firstStream.endsWith('\n');
      },
    });
    const claimed = proxy.claims.claim(request('restarts'), { deadlineMs: 30_000 });
    await proxy.watchesArrived(1);
    await writeStatus('restarts', waitingStatus('restarts'));
    await proxy.watchesArrived(3);
    await writeStatus('restarts', readyStatus('restarts'));
    expect(await claimed).toEqual({ claim: 'restarts', ...bound('restarts') });

    const versions = proxy.watches().map((w) => w.url.searchParams.get('resourceVersion'));
    const [created, read] = proxy.answered;
    const modified = versions[1];
    expect(
      proxy.requests.map((r) => `${r.method}${r.url.searchParams.has('watch') ? ' watch' : ''}`),
    ).toEqual(['POST', 'GET watch', 'GET watch', 'GET', 'GET watch']);
    expect(`POST ${versions[0] ?? ''}`).toBe(created);
    // Watched again from the version of the change the ended watch delivered, not the create's.
    expect(`POST ${modified ?? ''}`).not.toBe(created);
    // After the 410: the claim read, and watched from the version the read answered.
    expect(read).toBe(`GET ${modified ?? ''}`);
    expect(versions[2]).toBe(modified);
  });

  it('at the deadline it fails saying what the Bound condition said; the claim is kept', async () => {
    const claims = new SandboxClaims(kubeConfig());
    const started = performance.now();
    const claimed = claims.claim(request('late'), { deadlineMs: 2_000 }).catch((e: unknown) => e);
    await eventually('the claim exists', async () =>
      (await customObjects()
        .getNamespacedCustomObject({ ...objects, name: 'late' })
        .catch(() => undefined)) === undefined
        ? pending('not yet')
        : true,
    );
    const message = `spec.warmPoolRef.name: SandboxWarmPool ${namespace}/pool does not exist`;
    await writeStatus('late', { conditions: [condition('Bound', 'False', 'WarmPoolNotFound', message)] });
    const failed = await claimed;
    const elapsed = performance.now() - started;
    expect(failed).toBeInstanceOf(SandboxClaimNotReadyError);
    expect(failed).toMatchObject({
      kind: 'SandboxClaimNotReady',
      namespace,
      claim: 'late',
      reason: 'Deadline',
      deadlineMs: 2_000,
      seen: `Bound False WarmPoolNotFound: ${message}`,
    });
    expect((failed as Error).message).toBe(
      `sandboxclaim ${namespace}/late was not bound and Ready within 2000 ms (last seen: Bound False ` +
        `WarmPoolNotFound: ${message}); the claim is kept, delete it to give it up`,
    );
    expect(elapsed).toBeGreaterThanOrEqual(2_000);
    expect(elapsed).toBeLessThan(3_000);
    await expect(
      customObjects().getNamespacedCustomObject({ ...objects, name: 'late' }),
    ).resolves.toBeDefined();
  });

  it('a claim deleted while it is watched fails at once, Gone', async () => {
    const proxy = await recorded();
    const claimed = proxy.claims.claim(request('deleted'), { deadlineMs: 30_000 }).catch((e: unknown) => e);
    await proxy.watchesArrived(1);
    const deleted = performance.now();
    await customObjects().deleteNamespacedCustomObject({ ...objects, name: 'deleted' });
    expect(await claimed).toMatchObject({ kind: 'SandboxClaimNotReady', claim: 'deleted', reason: 'Gone' });
    expect(performance.now() - deleted).toBeLessThan(2_000);
  });
});
