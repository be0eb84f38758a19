/**
 * SandboxClaims against the real API server with the operator running (docs/warm-pools.md, "Claims"): a warm
 * claim binds a ready pool sandbox and its SessionReference exists from the bind; an empty pool goes cold and
 * says so; deleting a claim forgets its reference and destroys its sandbox, unless another session attached
 * meanwhile (Blocked, as for any sandbox); claims racing for one sandbox never share it, and a pool's shrink
 * racing a bind never deletes the bound sandbox (both writes carry a resourceVersion precondition); a claim
 * waiting for its pool binds once the pool is created.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GROUP, SANDBOX, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import { sessionReferenceName } from '../../../operator/client/names.ts';
import { SandboxClaims } from '../../../operator/client/sandbox-claims.ts';
import { MISSING_RETRY_MS } from '../../../operator/controller/binding/reconciler.ts';
import { SessionReferences } from '../../../operator/client/session-references.ts';
import { JSON_PATCH, kubeConfig, testNamespace } from '../../harness/kube.ts';
import { eventually, pending } from '../../harness/eventually.ts';
import { parseExposition, series } from '../../harness/prometheus-text.ts';
import { getReference, getSandbox, sandboxGone, sandboxManifest, untilSandbox } from './fixtures.ts';
import { customObjects, grantOperatorRbac, startOperator, type RunningOperator } from './operator.ts';

const namespace = testNamespace('claims');
const CLAIM_LABEL = `${GROUP}/sandbox-claim`;
const POOL_LABEL = `${GROUP}/warm-pool`;
let operator: RunningOperator;

const objects = (plural: string) => ({ group: GROUP, version: VERSION, namespace, plural });
const create = (plural: string, body: object) =>
  customObjects().createNamespacedCustomObject({ ...objects(plural), body });
const claims = () => new SandboxClaims(kubeConfig());

type Listed = {
  items: {
    metadata: {
      name: string;
      labels?: Record<string, string>;
      ownerReferences?: unknown[];
      deletionTimestamp?: string;
    };
    status?: { conditions?: { type: string; status: string }[] };
  }[];
};

async function template(name: string) {
  const { spec } = sandboxManifest(namespace, name);
  await create('sandboxtemplates', {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'SandboxTemplate',
    metadata: { name, namespace },
    spec,
  });
}

async function pool(name: string, replicas: number) {
  await template(`${name}-template`);
  await create('sandboxwarmpools', {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'SandboxWarmPool',
    metadata: { name, namespace },
    spec: { templateRef: { name: `${name}-template` }, replicas },
  });
}

async function scale(name: string, replicas: number) {
  await customObjects().patchNamespacedCustomObject(
    {
      ...objects('sandboxwarmpools'),
      name,
      body: [{ op: 'replace', path: '/spec/replicas', value: replicas }],
    },
    JSON_PATCH,
  );
}

const sandboxesOf = async (selector: string) =>
  (
    (await customObjects().listNamespacedCustomObject({
      ...objects(SANDBOX.plural),
      labelSelector: selector,
    })) as Listed
  ).items;

const ready = (sandbox: Listed['items'][number]) =>
  sandbox.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

/** Waits until the pool keeps `count` ready, unclaimed sandboxes; returns their names. */
async function readyPoolSandboxes(poolName: string, count: number): Promise<string[]> {
  return eventually(
    `${count} ready sandboxes in pool ${poolName}`,
    async () => {
      const unclaimed = await sandboxesOf(`${POOL_LABEL}=${poolName},!${CLAIM_LABEL}`);
      const names = unclaimed
        .filter((s) => ready(s) && !s.metadata.deletionTimestamp)
        .map((s) => s.metadata.name);
      return names.length >= count ? names : pending({ names, all: unclaimed.map((s) => s.metadata.name) });
    },
    60_000,
  );
}

const claimRequest = (
  name: string,
  source: { warmPoolRef: { name: string } } | { templateRef: { name: string } },
) => ({
  namespace,
  name,
  session: `workspace_${name.replaceAll('-', '_')}`,
  worktree: 'wt-1',
  route: `shared-control-v1/${name}`,
  role: 'Root' as const,
  ...source,
});

async function deleteClaim(name: string) {
  await claims().release(namespace, name);
  await eventually(`claim ${name} gone`, async () => {
    const found = await customObjects()
      .getNamespacedCustomObject({ ...objects('sandboxclaims'), name })
      .catch(() => undefined);
    return found === undefined ? true : pending(found);
  });
}

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace);
});
afterAll(async () => {
  await operator.stop();
});

describe('sandbox claims', () => {
  it('a warm claim binds a ready pool sandbox, referenced from the bind', async () => {
    await pool('warm', 1);
    const [pooled] = await readyPoolSandboxes('warm', 1);
    const bound = await claims().claim(claimRequest('warm-1', { warmPoolRef: { name: 'warm' } }), {
      deadlineMs: 30_000,
    });
    expect(bound).toMatchObject({ claim: 'warm-1', sandbox: pooled, launchType: 'Warm' });
    expect(bound.reference).toBe(sessionReferenceName(pooled ?? '', 'workspace_warm_1'));
    const reference = await getReference(namespace, bound.reference);
    expect(reference?.spec).toMatchObject({
      sandbox: pooled,
      session: 'workspace_warm_1',
      worktree: 'wt-1',
      state: 'Attached',
    });
    expect(reference?.metadata.labels?.[CLAIM_LABEL]).toBe('warm-1');
    // The claim label on, the pool's owner reference off: no pool operation nor garbage collection takes it.
    const [sandbox] = await sandboxesOf(`${CLAIM_LABEL}=warm-1`);
    expect(sandbox?.metadata.name).toBe(pooled);
    expect(sandbox?.metadata.ownerReferences ?? []).toEqual([]);
  });

  it('an empty pool falls back to a cold sandbox from its template, and says Cold', async () => {
    await pool('empty', 0);
    const bound = await claims().claim(claimRequest('cold-1', { warmPoolRef: { name: 'empty' } }), {
      deadlineMs: 60_000,
    });
    expect(bound.launchType).toBe('Cold');
    const sandbox = await getSandbox(namespace, bound.sandbox);
    expect(sandbox?.metadata.labels).toMatchObject({
      [CLAIM_LABEL]: 'cold-1',
      [`${GROUP}/template`]: 'empty-template',
    });
    expect(sandbox?.metadata.labels?.[POOL_LABEL]).toBeUndefined();
    expect(await getReference(namespace, bound.reference)).toBeDefined();
  });

  it('a claim of a pool that does not exist says which field, and is not bound', async () => {
    await create('sandboxclaims', {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'SandboxClaim',
      metadata: { name: 'nowhere', namespace },
      spec: { warmPoolRef: { name: 'missing' }, session: 'workspace_nowhere', route: 'r', role: 'Root' },
    });
    const bound = await eventually('Bound=False WarmPoolNotFound', async () => {
      const claim = (await customObjects().getNamespacedCustomObject({
        ...objects('sandboxclaims'),
        name: 'nowhere',
      })) as {
        status?: { conditions?: { type: string; reason: string; message: string }[] };
      };
      const condition = claim.status?.conditions?.find((c) => c.type === 'Bound');
      return condition?.reason === 'WarmPoolNotFound' ? condition : pending(claim.status);
    });
    expect(bound.message).toContain('spec.warmPoolRef.name');
    // The pool created now brings the claim's turn through the binding's pool watch, not the 15 s backstop:
    // an empty pool, so it binds Cold at once. The deadline is shorter than the backstop (MISSING_RETRY_MS).
    const created = Date.now();
    await template('missing-template');
    await create('sandboxwarmpools', {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'SandboxWarmPool',
      metadata: { name: 'missing', namespace },
      spec: { templateRef: { name: 'missing-template' }, replicas: 0 },
    });
    const late = await eventually(
      'claim bound once its pool exists',
      async () => {
        const claim = (await customObjects().getNamespacedCustomObject({
          ...objects('sandboxclaims'),
          name: 'nowhere',
        })) as { status?: { sandbox?: string; launchType?: string } };
        return claim.status?.sandbox === undefined ? pending(claim.status) : claim.status;
      },
      MISSING_RETRY_MS - 3_000 - (Date.now() - created),
    );
    expect(late.launchType).toBe('Cold');
    await deleteClaim('nowhere');
  });

  it('deleting a claim forgets its reference and destroys its sandbox', async () => {
    await template('exclusive-template');
    const bound = await claims().claim(
      claimRequest('exclusive', { templateRef: { name: 'exclusive-template' } }),
      { deadlineMs: 60_000 },
    );
    await deleteClaim('exclusive');
    expect(await getReference(namespace, bound.reference)).toBeUndefined();
    await sandboxGone(namespace, bound.sandbox);
  });

  it('deleting a claim while another session attached keeps the sandbox, Blocked', async () => {
    await template('shared-template');
    const bound = await claims().claim(claimRequest('shared', { templateRef: { name: 'shared-template' } }), {
      deadlineMs: 60_000,
    });
    await new SessionReferences(kubeConfig()).attach({
      namespace,
      sandbox: bound.sandbox,
      session: 'workspace_other',
      worktree: 'wt-2',
      route: 'r',
      role: 'Root',
    });
    await deleteClaim('shared');
    expect(await getReference(namespace, bound.reference)).toBeUndefined();
    const blocked = await untilSandbox(
      namespace,
      bound.sandbox,
      'Blocked',
      (s) => s.status?.phase === 'Blocked',
    );
    expect(blocked.metadata.deletionTimestamp).toBeDefined();
    expect(blocked.status?.decision?.blockingReferences).toEqual([
      sessionReferenceName(bound.sandbox, 'workspace_other'),
    ]);
    await new SessionReferences(kubeConfig()).forget(namespace, bound.sandbox, 'workspace_other');
    await sandboxGone(namespace, bound.sandbox);
  });

  it('two claims racing for a pool of one never bind the same sandbox', async () => {
    await pool('race', 1);
    await readyPoolSandboxes('race', 1);
    const [a, b] = await Promise.all(
      ['race-a', 'race-b'].map((name) =>
        claims().claim(claimRequest(name, { warmPoolRef: { name: 'race' } }), { deadlineMs: 60_000 }),
      ),
    );
    expect(a?.sandbox).not.toBe(b?.sandbox);
    expect([a?.launchType, b?.launchType]).toContain('Warm');
    for (const claim of [a, b]) {
      const sandbox = await getSandbox(namespace, claim?.sandbox ?? '');
      expect(sandbox?.metadata.labels?.[CLAIM_LABEL]).toBe(claim?.claim);
    }
  });

  it('a pool shrinking while a claim binds never deletes the bound sandbox', async () => {
    await pool('shrink', 2);
    await readyPoolSandboxes('shrink', 2);
    const [bound] = await Promise.all([
      claims().claim(claimRequest('shrink-1', { warmPoolRef: { name: 'shrink' } }), { deadlineMs: 60_000 }),
      scale('shrink', 0),
    ]);
    // The pool deletes its unclaimed sandboxes; the bound one, whichever write won, is not among them.
    await eventually('the pool shrunk to no unclaimed sandbox', async () => {
      const left = (await sandboxesOf(`${POOL_LABEL}=shrink,!${CLAIM_LABEL}`)).filter(
        (s) => !s.metadata.deletionTimestamp,
      );
      return left.length === 0 ? true : pending(left.map((s) => s.metadata.name));
    });
    const sandbox = await getSandbox(namespace, bound.sandbox);
    expect(sandbox?.metadata.deletionTimestamp).toBeUndefined();
    expect(sandbox?.metadata.labels?.[CLAIM_LABEL]).toBe('shrink-1');
    expect(await getReference(namespace, bound.reference)).toMatchObject({
      spec: { sandbox: bound.sandbox },
    });
  });

  it('counts the bindings and observes claim → Ready by launch type and pool', async () => {
    const port = await operator.port;
    const samples = parseExposition(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
    const value = (name: string, labels: Record<string, string>) =>
      series(samples, name, labels).reduce((sum, sample) => sum + sample.value, 0);
    expect(value('sandbox_operator_sandbox_claims_bound_total', { launch_type: 'Warm' })).toBeGreaterThan(0);
    expect(value('sandbox_operator_sandbox_claims_bound_total', { launch_type: 'Cold' })).toBeGreaterThan(0);
    expect(
      value('sandbox_operator_sandbox_claim_ready_seconds_count', { launch_type: 'Warm', pool: 'warm' }),
    ).toBe(1);
    expect(
      series(samples, 'workqueue_adds_total', { name: 'sandboxclaim', controller: 'sandboxclaim' }),
    ).toHaveLength(1);
  });

  it('the status says sandbox only once the reference exists', async () => {
    const listed = (await customObjects().listNamespacedCustomObject(
      objects(SESSION_REFERENCE.plural),
    )) as Listed;
    const references = new Set(listed.items.map((r) => r.metadata.name));
    const all = (await customObjects().listNamespacedCustomObject(objects('sandboxclaims'))) as {
      items: {
        metadata: { name: string; deletionTimestamp?: string };
        status?: { sandbox?: string; reference?: string };
      }[];
    };
    for (const claim of all.items)
      if (claim.status?.sandbox !== undefined && claim.metadata.deletionTimestamp === undefined)
        expect(references.has(claim.status.reference ?? ''), claim.metadata.name).toBe(true);
  });
});
