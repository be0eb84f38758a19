/**
 * The operator's delete review (docs/adr/0011), as the operator serves it (`--review-bind`, `--review-cert-dir`)
 * and as api/operator-review.ts registers it, against the real API server. A leaked operator token may raise the
 * cleanup fence, which the operator-bounds policy then takes for an automatic cleanup; the review reads the
 * sandbox's references and refuses the delete while any is there. It may delete references, which the bounds
 * allow on every path the operator takes; the review refuses a reference foreign to a sandbox that stands. The
 * operator's own cleanup and release pass through it.
 *
 * The registration selects this file's two namespaces by a label: the operator watches one (its cleanup runs
 * there); in the other no operator acts, so a fence stays as the test wrote it.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESTRICTED_USER } from '@sandbox-operator/local-cluster';
import { freePort } from '@sandbox-operator/local-cluster/net';
import { ANNOTATIONS, GROUP, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import { operatorReviewWebhook } from '../../../operator/api/operator-review.ts';
import { loopbackCertificate } from '@sandbox-operator/local-cluster/certificate';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { createReference, createSandbox, getSandbox } from '../controller/fixtures.ts';
import { LedgerServer } from '../controller/ledger-server.ts';
import {
  customObjects,
  eventually,
  grantOperatorRbac,
  pending,
  startOperator,
  type RunningOperator,
} from '../controller/operator.ts';

const watched = testNamespace('delete-review');
const unwatched = testNamespace('delete-review-token');
const WEBHOOK = `${watched}-review`;
const SELECTED = { 'sandbox.agents.dev/delete-review-test': watched };
const FENCE = { [ANNOTATIONS.cleanupFence]: '2026-12-04T00:00:00Z' };
const LATER = { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 3600 };
const asOperator = (namespace: string, args: string[]) =>
  kubectl([...args, '-n', namespace, '--wait=false'], { restricted: true });

const ADOPTED = { [ANNOTATIONS.adoptedFrom]: 'cloud-agent v1 (pre-index)' };
// The session ledger the operator walks (and its review walks again): one adopted sandbox another worktree's
// session holds (a recorded allocation), others no one does.
const ledger = new LedgerServer(
  {
    owners: {
      'legacy-shared': [
        {
          session: 'workspace_5',
          worktree: 'wt-2',
          allocation: { sandbox: 'legacy-shared', provider: 'kubernetes' },
        },
      ],
    },
    locations: {},
  },
  'review-ledger-secret',
);

const logLines: string[] = [];
let operator: RunningOperator | undefined;

beforeAll(async () => {
  await grantOperatorRbac();
  const { dir, certPem } = await loopbackCertificate('delete-review');
  const port = await freePort();
  const log = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
  operator = startOperator(
    watched,
    ['--review-bind', `127.0.0.1:${port}`, '--review-cert-dir', dir, ...(await ledger.operatorFlags())],
    undefined,
    undefined,
    log,
  );
  await operator.port;
  for (const namespace of [watched, unwatched])
    await kubectlOk(['label', 'namespace', namespace, `sandbox.agents.dev/delete-review-test=${watched}`]);
  const registration = operatorReviewWebhook({
    name: WEBHOOK,
    operatorUsers: [RESTRICTED_USER],
    endpoint: { url: `https://127.0.0.1:${port}` },
    caBundlePem: certPem,
    namespaceSelector: { matchLabels: SELECTED },
  });
  await kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(registration) });
});

afterAll(async () => {
  await kubectlOk(['delete', 'validatingwebhookconfiguration', WEBHOOK, '--ignore-not-found']);
  await operator?.stop();
  await ledger.stop();
});

/** A status PATCH of the operator's identity in the namespace no operator watches, as its status writer sends one. */
const writeStatus = (name: string, status: object) =>
  kubectl(
    [
      'patch',
      'sandbox',
      name,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status }),
      '-n',
      unwatched,
    ],
    { restricted: true },
  );

const deleteReference = (namespace: string, name: string) =>
  customObjects().deleteNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace,
    plural: SESSION_REFERENCE.plural,
    name,
  });

describe('the operator’s identity deleting a fenced DeleteWhenUnreferenced sandbox (a leaked token)', () => {
  it('is refused while a reference is there, naming it, and the sandbox stays', async () => {
    await createSandbox(unwatched, 'held', { worktree: 'wt-1', cleanup: LATER, annotations: FENCE });
    await createReference(unwatched, 'board-main', {
      sandbox: 'held',
      session: 'workspace_1',
      worktree: 'wt-2',
    });
    // Webhooks register asynchronously: until the API server calls this one, the bounds alone let it through.
    const refused = await eventually('the review consulted', async () => {
      const result = await kubectl(['delete', 'sandbox', 'held', '-n', unwatched, '--dry-run=server'], {
        restricted: true,
      });
      return result.exitCode !== 0 ? result : pending({ stdout: result.stdout });
    });
    expect(refused.stderr).toContain('still has 1 SessionReference(s) (board-main)');
    const deleted = await asOperator(unwatched, ['delete', 'sandbox', 'held']);
    expect(deleted.exitCode).not.toBe(0);
    expect(deleted.stderr).toContain('still has 1 SessionReference(s) (board-main)');
    expect(await getSandbox(unwatched, 'held')).toBeDefined();
  });

  it('is admitted once nothing references it (what the cleanup itself waits for)', async () => {
    await deleteReference(unwatched, 'board-main');
    const deleted = await asOperator(unwatched, ['delete', 'sandbox', 'held']);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    await eventually('held gone', async () =>
      (await getSandbox(unwatched, 'held')) === undefined ? true : pending('still there'),
    );
  });

  it('is not the review’s to judge when someone else deletes (a tenant’s delete never reaches it)', async () => {
    await createSandbox(unwatched, 'tenants', { worktree: 'wt-1', cleanup: LATER, annotations: FENCE });
    await createReference(unwatched, 'tenant-ref', {
      sandbox: 'tenants',
      session: 'workspace_2',
      worktree: 'wt-2',
    });
    const deleted = await kubectl(['delete', 'sandbox', 'tenants', '-n', unwatched, '--wait=false']);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
  });
});

describe('the operator’s identity deleting a SessionReference (a leaked token)', () => {
  const deleteAsOperator = (name: string) =>
    asOperator(unwatched, ['delete', SESSION_REFERENCE.plural, name]);

  it('is refused for a reference foreign to a sandbox that stands, and the reference stays', async () => {
    await createSandbox(unwatched, 'shared', { worktree: 'wt-1' });
    await createReference(unwatched, 'other-worktree', {
      sandbox: 'shared',
      session: 'workspace_3',
      worktree: 'wt-2',
    });
    const refused = await eventually('the review consulted', async () => {
      const result = await kubectl(
        ['delete', SESSION_REFERENCE.plural, 'other-worktree', '-n', unwatched, '--dry-run=server'],
        { restricted: true },
      );
      return result.exitCode !== 0 ? result : pending({ stdout: result.stdout });
    });
    expect(refused.stderr).toContain(
      `sessionreference ${unwatched}/other-worktree is foreign to sandbox ${unwatched}/shared (worktree wt-2; ` +
        "the sandbox's wt-1), which still stands",
    );
    const deleted = await deleteAsOperator('other-worktree');
    expect(deleted.exitCode).not.toBe(0);
    expect(await kubectl(['get', SESSION_REFERENCE.plural, 'other-worktree', '-n', unwatched])).toMatchObject(
      {
        exitCode: 0,
      },
    );
  });

  it('is refused for the sandbox’s own worktree’s reference while the sandbox is not being deleted', async () => {
    // An own reference decides no verdict, but it keeps a DeleteWhenUnreferenced sandbox from its cleanup; the
    // operator deletes one only while its sandbox is deleted (the release below passes the review).
    await createReference(unwatched, 'same-worktree', {
      sandbox: 'shared',
      session: 'workspace_4',
      worktree: 'wt-1',
    });
    const deleted = await deleteAsOperator('same-worktree');
    expect(deleted.exitCode).not.toBe(0);
    expect(deleted.stderr).toContain(
      `sessionreference ${unwatched}/same-worktree is of sandbox ${unwatched}/shared's own worktree (wt-1), ` +
        'which is not being deleted',
    );
  });

  it('is admitted on an administrator’s erase request until its status records it, and once the sandbox is gone', async () => {
    await createSandbox(unwatched, 'erased', { worktree: 'wt-1' });
    await createReference(unwatched, 'erased-ref', {
      sandbox: 'erased',
      session: 'workspace_5',
      worktree: 'wt-2',
    });
    expect((await deleteAsOperator('erased-ref')).exitCode).not.toBe(0);
    await kubectlOk([
      'annotate',
      'sandbox',
      'erased',
      '-n',
      unwatched,
      `${ANNOTATIONS.eraseReferences}=INC-1`,
    ]);
    // Before the operator wrote any status the annotation is inherited, not a request: nothing is erased.
    expect((await deleteAsOperator('erased-ref')).exitCode).not.toBe(0);
    const writeStatus = (status: object) =>
      kubectlOk([
        'patch',
        'sandbox',
        'erased',
        '-n',
        unwatched,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status }),
      ]);
    await writeStatus({ reconciliation: { state: 'NotRequired', marker: true } });
    const erased = await deleteAsOperator('erased-ref');
    expect(erased.exitCode, erased.stderr).toBe(0);
    // Once the status records the erase as acted on, the annotation admits nothing more.
    await writeStatus({ capacity: { overflowed: false, erasedFor: 'INC-1' } });
    await createReference(unwatched, 'attached-since', {
      sandbox: 'erased',
      session: 'workspace_7',
      worktree: 'wt-2',
    });
    const since = await deleteAsOperator('attached-since');
    expect(since.exitCode).not.toBe(0);
    expect(since.stderr).toContain('is foreign to sandbox');

    await kubectlOk(['delete', 'sandbox', 'shared', '-n', unwatched]);
    const gone = await deleteAsOperator('other-worktree');
    expect(gone.exitCode, gone.stderr).toBe(0);
  });
});

describe('an Exclusive decision recorded by the operator’s identity', () => {
  const recordExclusive = (name: string) =>
    writeStatus(name, {
      decision: { verdict: 'Exclusive', evidence: 'Index', decidedAt: '2026-12-04T00:00:00Z' },
    });

  it('is refused while another worktree’s session uses the sandbox, admitted once none does', async () => {
    // The deletion takes a recorded Exclusive as final and releases pods, workspace and index: a token forging
    // it would have the operator destroy a shared sandbox.
    await createSandbox(unwatched, 'forged', { worktree: 'wt-1' });
    await createReference(unwatched, 'forged-board', {
      sandbox: 'forged',
      session: 'workspace_8',
      worktree: 'wt-2',
    });
    const forged = await recordExclusive('forged');
    expect(forged.exitCode).not.toBe(0);
    expect(forged.stderr).toContain(
      'admission webhook "exclusive-decisions.operator-review.sandbox.agents.dev" denied the request: sandbox ' +
        `${unwatched}/forged has 1 SessionReference(s) foreign to its worktree wt-1 or unreadable (forged-board)`,
    );
    expect((await getSandbox(unwatched, 'forged'))?.status?.decision).toBeUndefined();

    await kubectlOk(['delete', 'sessionreference', 'forged-board', '-n', unwatched]);
    await createReference(unwatched, 'forged-own', {
      sandbox: 'forged',
      session: 'workspace_9',
      worktree: 'wt-1',
    });
    const recorded = await recordExclusive('forged');
    expect(recorded.exitCode, recorded.stderr).toBe(0);
  });

  it('is admitted as a first status when nothing references the sandbox (a deletion before any status)', async () => {
    await createSandbox(unwatched, 'first-record', { worktree: 'wt-1' });
    const recorded = await recordExclusive('first-record');
    expect(recorded.exitCode, recorded.stderr).toBe(0);
    expect((await getSandbox(unwatched, 'first-record'))?.status?.decision?.verdict).toBe('Exclusive');
  });
});

describe('the legacy marker written by the operator’s identity', () => {
  const writeReconciliation = (name: string, marker: boolean) =>
    writeStatus(name, { reconciliation: { state: marker ? 'Complete' : 'Pending', marker } });
  const markerOf = async (name: string) =>
    (await getSandbox(unwatched, name))?.status?.reconciliation?.marker;

  it('is refused for an adopted sandbox the ledger says another worktree holds, its first status included', async () => {
    // With the marker the index alone decides; a token forging it on a sandbox older than the index would have
    // the operator destroy one a legacy session of another worktree still uses.
    await createSandbox(unwatched, 'legacy-shared', { worktree: 'wt-1', annotations: ADOPTED });
    const first = await writeReconciliation('legacy-shared', true);
    expect(first.exitCode).not.toBe(0);
    expect(first.stderr).toContain(
      'admission webhook "legacy-markers.operator-review.sandbox.agents.dev" denied the request: sandbox ' +
        `${unwatched}/legacy-shared is adopted and the legacy walk at admission found Foreign`,
    );
    const unmarked = await writeReconciliation('legacy-shared', false);
    expect(unmarked.exitCode, unmarked.stderr).toBe(0);
    const forged = await writeReconciliation('legacy-shared', true);
    expect(forged.exitCode).not.toBe(0);
    expect(forged.stderr).toContain('workspace_5 has a recorded allocation of kubernetes/legacy-shared');
    expect(await markerOf('legacy-shared')).toBe(false);
  });

  it('is admitted once the walk at admission completes: the ledger holds no other owner', async () => {
    await createSandbox(unwatched, 'legacy-alone', { worktree: 'wt-1', annotations: ADOPTED });
    expect((await writeReconciliation('legacy-alone', false)).exitCode).toBe(0);
    const marked = await writeReconciliation('legacy-alone', true);
    expect(marked.exitCode, marked.stderr).toBe(0);
    expect(await markerOf('legacy-alone')).toBe(true);
  });

  it('is earned by the operator’s own walk through the review', async () => {
    await createSandbox(watched, 'legacy-own', { worktree: 'wt-1', annotations: ADOPTED });
    await eventually('marker earned', async () =>
      (await getSandbox(watched, 'legacy-own'))?.status?.reconciliation?.marker === true
        ? true
        : pending('no marker yet'),
    );
    expect(logLines.join('')).toContain(`"sandbox":"${watched}/legacy-own"`);
    expect(logLines.join('')).toContain('marker review: the legacy walk at admission completed');
  });
});

describe('the operator’s own cleanup', () => {
  it('passes through the review: an unreferenced sandbox past its TTL is deleted, and the review said so', async () => {
    await createSandbox(watched, 'ephemeral', {
      worktree: 'wt-1',
      cleanup: { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 0 },
    });
    await eventually('ephemeral cleaned up', async () =>
      (await getSandbox(watched, 'ephemeral')) === undefined ? true : pending('still there'),
    );
    const admitted = logLines
      .map((line) => JSON.parse(line) as { msg?: string; sandbox?: string; user?: string })
      .filter((entry) => entry.msg === 'delete review: sandbox unreferenced, its delete admitted');
    expect(admitted).toContainEqual(
      expect.objectContaining({ sandbox: `${watched}/ephemeral`, user: RESTRICTED_USER }),
    );
  });

  it('releases an exclusive deletion through the review: its own worktree’s reference erased, the review said so', async () => {
    await createSandbox(watched, 'solo', { worktree: 'wt-1' });
    await createReference(watched, 'solo-own', { sandbox: 'solo', session: 'workspace_6', worktree: 'wt-1' });
    await eventually('solo held by the operator’s finalizer', async () =>
      ((await getSandbox(watched, 'solo'))?.metadata.finalizers ?? []).length > 0
        ? true
        : pending('no finalizer'),
    );
    await kubectlOk(['delete', 'sandbox', 'solo', '-n', watched, '--wait=false']);
    await eventually('solo released', async () =>
      (await getSandbox(watched, 'solo')) === undefined ? true : pending('still there'),
    );
    const admitted = logLines
      .map((line) => JSON.parse(line) as { msg?: string; reference?: string; user?: string })
      .filter(
        (entry) =>
          entry.msg === 'reference review: not a standing sandbox’s foreign reference, its delete admitted',
      );
    expect(admitted).toContainEqual(
      expect.objectContaining({ reference: `${watched}/solo-own`, user: RESTRICTED_USER }),
    );
  });

  it('waits while the review is not served (failurePolicy Fail); nobody else does', async () => {
    await operator?.stop();
    operator = undefined;
    await createSandbox(unwatched, 'unserved', { worktree: 'wt-1', cleanup: LATER, annotations: FENCE });
    const byOperator = await asOperator(unwatched, ['delete', 'sandbox', 'unserved']);
    expect(byOperator.exitCode).not.toBe(0);
    expect(byOperator.stderr).toContain(`failed calling webhook`);
    const byAdmin = await kubectl(['delete', 'sandbox', 'unserved', '-n', unwatched, '--wait=false']);
    expect(byAdmin.exitCode, byAdmin.stderr).toBe(0);
  });
});
