/**
 * claim(): a session gets a sandbox bound by the operator, with its reference from the bind, and gives it up by
 * release(); a claim that cannot be bound fails at its deadline saying why (docs/warm-pools.md, "Claims"). It
 * watches its claim from the version its create answered: a watch that ends is opened again from the last
 * version it saw, one that expires (410) is replaced by a read and a watch from the version read.
 */
import { expect } from 'vitest';
import { API_VERSION, GROUP, VERSION } from '../../../../operator/api/names.ts';
import { sessionReferenceName } from '../../../../operator/client/names.ts';
import { getReference, sandboxGone, sandboxManifest } from '../../controller/fixtures.ts';
import { customObjects } from '../../controller/operator.ts';
import { pathOf, type Scenario } from '../context.ts';

type Claimed = { claim: string; sandbox: string; reference: string; launchType: string };

async function template(namespace: string, name: string) {
  await customObjects().createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: 'sandboxtemplates',
    body: {
      apiVersion: API_VERSION,
      kind: 'SandboxTemplate',
      metadata: { name, namespace },
      spec: sandboxManifest(namespace, name).spec,
    },
  });
}

/** The answer of an expired watch, as the API server gives it: a 200 whose one event is an ERROR of 410. */
const EXPIRED = `${JSON.stringify({
  type: 'ERROR',
  object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 },
})}\n`;

const claimArgs = (namespace: string, name: string, session: string) => ({
  namespace,
  name,
  session,
  worktree: 'wt-9',
  route: `shared-control-v1/${session}`,
  role: 'Root',
});

export const claims: readonly Scenario[] = [
  {
    name: 'a claim hears Ready through its watch, across a watch that ends and one that expires (410)',
    async run(context) {
      const { namespace } = context;
      const name = context.name('rewatched');
      const seen: { method: string; url: URL }[] = [];
      const answered: string[] = [];
      const arrivals: (() => void)[] = [];
      let watches = 0;
      let firstStream = '';
      const ofClaim = (url: string) => pathOf(url).includes('/sandboxclaims');
      const proxy = await context.proxy({
        hold: (method, url) => {
          if (!ofClaim(url)) return undefined;
          seen.push({ method, url: new URL(url, 'http://proxy') });
          arrivals.splice(0).forEach((arrived) => arrived());
          return undefined;
        },
        rewrite: (method, url, body) => {
          if (ofClaim(url)) {
            const version = (JSON.parse(body) as { metadata?: { resourceVersion?: string } }).metadata
              ?.resourceVersion;
            answered.push(version ?? '?');
          }
          return undefined;
        },
        // The second watch expires; the first ends cleanly once it delivered the operator's first change.
        answer: (_method, url) =>
          ofClaim(url) && url.includes('watch=true') && ++watches === 2
            ? { status: 200, body: EXPIRED }
            : undefined,
        endAfter: (url, chunk) => {
          if (!ofClaim(url) || watches !== 1) return false;
          firstStream += chunk;
          return firstStream.includes('"MODIFIED"') && firstStream.endsWith('\n');
        },
      });
      const watchesOpened = () => seen.filter((r) => r.url.searchParams.get('watch') === 'true');
      const claimed = context
        .host()
        .ok<Claimed>(
          'claim',
          { ...claimArgs(namespace, name, 'workspace_w'), warmPoolRef: { name }, deadlineMs: 60_000 },
          proxy,
        );
      // The pool does not exist yet (Bound False WarmPoolNotFound); it comes once the third watch is open.
      while (watchesOpened().length < 3) await new Promise<void>((resolve) => arrivals.push(resolve));
      await template(namespace, name);
      await customObjects().createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: 'sandboxwarmpools',
        body: {
          apiVersion: API_VERSION,
          kind: 'SandboxWarmPool',
          metadata: { name, namespace },
          spec: { templateRef: { name }, replicas: 0 },
        },
      });
      expect(await claimed).toMatchObject({ claim: name, launchType: 'Cold' });

      expect(seen.map((r) => `${r.method}${r.url.searchParams.has('watch') ? ' watch' : ''}`)).toEqual([
        'POST',
        'GET watch',
        'GET watch',
        'GET',
        'GET watch',
      ]);
      const versions = watchesOpened().map((r) => r.url.searchParams.get('resourceVersion'));
      expect(watchesOpened().map((r) => r.url.searchParams.get('fieldSelector'))).toEqual(
        Array(3).fill(`metadata.name=${name}`),
      );
      const [created, read] = answered;
      expect(versions[0]).toBe(created);
      expect(versions[1]).not.toBe(created); // from the change the ended watch delivered
      expect(versions[2]).toBe(read); // after the 410: from the version read
      expect(await context.host().ok('releaseClaim', { namespace, claim: name })).toBe('Released');
    },
  },
  {
    name: 'a claim returns its bound sandbox and the reference the binding wrote; release gives it up',
    async run(context) {
      const { namespace } = context;
      const name = context.name('claimed');
      await template(namespace, name);
      const host = context.host();
      const claimed = await host.ok<Claimed>('claim', {
        ...claimArgs(namespace, name, 'workspace_c'),
        templateRef: { name },
        deadlineMs: 60_000,
      });
      expect(claimed).toMatchObject({ claim: name, launchType: 'Cold' });
      expect(claimed.reference).toBe(sessionReferenceName(claimed.sandbox, 'workspace_c'));
      const reference = await getReference(namespace, claimed.reference);
      expect(reference?.spec).toMatchObject({
        sandbox: claimed.sandbox,
        session: 'workspace_c',
        worktree: 'wt-9',
      });
      expect(await host.ok('releaseClaim', { namespace, claim: name })).toBe('Released');
      await sandboxGone(namespace, claimed.sandbox);
      expect(await getReference(namespace, claimed.reference)).toBeUndefined();
    },
  },
  {
    name: 'a claim of a pool that does not exist fails at its deadline saying why',
    async run(context) {
      const { namespace } = context;
      const name = context.name('unbound');
      const host = context.host();
      // The host started and its client made (a release of no claim yet), so the time below is the claim's.
      expect(await host.ok('releaseClaim', { namespace, claim: name })).toBe('AlreadyGone');
      const asked = performance.now();
      const refused = await host.fails('claim', {
        ...claimArgs(namespace, name, 'workspace_u'),
        warmPoolRef: { name: 'no-such-pool' },
        deadlineMs: 5_000,
      });
      // At the deadline: the create's round trip before it, and at most the rest of a watch's whole second
      // (the server's timeoutSeconds) after it where the client cannot stop a blocking read itself.
      const elapsed = performance.now() - asked;
      process.stderr.write(
        `[claims] ${context.client.name}: deadline 5000 ms, failed after ${elapsed.toFixed(0)} ms\n`,
      );
      expect(elapsed).toBeGreaterThanOrEqual(5_000);
      expect(elapsed).toBeLessThan(6_500);
      expect(refused).toMatchObject({ kind: 'SandboxClaimNotReady', reason: 'Deadline' });
      expect(refused.seen).toContain('WarmPoolNotFound');
      expect(await host.ok('releaseClaim', { namespace, claim: name })).toBe('Released');
    },
  },
];
