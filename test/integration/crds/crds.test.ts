// The CRDs in crds/ as the API server serves them: valid objects apply and read back with their
// defaults, kubectl shows the printer columns, short names, category and field selectors, and
// `kubectl explain` shows the field descriptions.
import { describe, expect, it } from 'vitest';
import { parseSandbox } from '../../../operator/api/parse.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { sandbox, sessionReference } from './examples.ts';

const ns = testNamespace('crds');

function apply(manifest: object): Promise<string> {
  return kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(manifest) });
}

async function getJson(
  resource: string,
  name: string,
): Promise<Record<string, unknown> & { spec: Record<string, unknown> }> {
  return JSON.parse(await kubectlOk(['get', resource, name, '-n', ns, '-o', 'json'])) as Record<
    string,
    unknown
  > & {
    spec: Record<string, unknown>;
  };
}

/** Splits `kubectl get` table output into rows of cells (columns are separated by 2+ spaces). */
function table(output: string): string[][] {
  return output
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/));
}

describe('valid objects', () => {
  it('apply and read back a Sandbox, with the schema defaults filled in', async () => {
    await apply(sandbox(ns, 'sbx-a', { cleanup: undefined, shellReaper: undefined }));
    const stored = await getJson('sandboxes.sandbox.agents.dev', 'sbx-a');
    expect(stored.spec).toEqual({
      worktree: 'wt-1',
      provider: 'kubernetes',
      replicas: 1,
      podTemplate: {
        metadata: { labels: { app: 'agent-sandbox' } },
        spec: {
          containers: [
            { name: 'workspace', image: 'registry.example/sandbox:1', command: ['sleep', 'infinity'] },
          ],
        },
      },
      cleanup: { policy: 'Retain', ttlSecondsAfterUnreferenced: 300 },
      shellReaper: { enabled: false, gracePeriodSeconds: 5 },
      operatingMode: 'Running',
      volumeClaimTemplates: [],
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' },
    });
  });

  it('apply and read back a SessionReference; a re-apply of the same identity is accepted', async () => {
    const reference = sessionReference(ns, 'sref-a', { state: undefined });
    await apply(reference);
    const stored = await getJson('sessionreferences.sandbox.agents.dev', 'sref-a');
    expect(stored.spec).toEqual({
      sandbox: 'sbx-a',
      session: 'workspace_123',
      worktree: 'wt-1',
      route: 'shared-control-v1/wt-1/workspace_123',
      role: 'Subagent',
      parentSession: 'workspace_100',
      state: 'Attached',
    });
    // Detach: the state may change, the identity may not (see rejections.test.ts).
    expect(await apply(sessionReference(ns, 'sref-a', { state: 'Detached' }))).toContain('configured');
    expect((await getJson('sref', 'sref-a')).spec['state']).toBe('Detached');
  });
});

describe('kubectl get', () => {
  it('shows the Sandbox printer columns, filled from status', async () => {
    await apply(sandbox(ns, 'sbx-columns'));
    const status = {
      status: {
        phase: 'Blocked',
        ready: '1/2',
        references: { attached: 2, detached: 1, foreign: 1 },
        decision: { verdict: 'Foreign', evidence: 'Index', decidedAt: '2026-01-01T00:00:00Z' },
        reconciliation: { state: 'NotRequired', marker: true },
      },
    };
    await kubectlOk([
      'patch',
      'sbx',
      'sbx-columns',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(status),
    ]);

    const [header, row] = table(await kubectlOk(['get', 'sandboxes', 'sbx-columns', '-n', ns]));
    expect(header).toEqual([
      'NAME',
      'PHASE',
      'READY',
      'WORKTREE',
      'ATTACHED',
      'DETACHED',
      'FOREIGN',
      'VERDICT',
      'AGE',
    ]);
    expect(row?.slice(0, 8)).toEqual(['sbx-columns', 'Blocked', '1/2', 'wt-1', '2', '1', '1', 'Foreign']);

    const [wideHeader, wideRow] = table(
      await kubectlOk(['get', 'sbx', 'sbx-columns', '-n', ns, '-o', 'wide']),
    );
    expect(wideHeader).toEqual([
      'NAME',
      'PHASE',
      'READY',
      'WORKTREE',
      'ATTACHED',
      'DETACHED',
      'FOREIGN',
      'VERDICT',
      'EVIDENCE',
      'MARKER',
      'AGE',
    ]);
    expect(wideRow?.slice(8, 10)).toEqual(['Index', 'true']);
  });

  it("accepts a third-party writer's condition at metav1.Condition's bounds, beside the operator's", async () => {
    await apply(sandbox(ns, 'sbx-foreign-condition'));
    const foreign = {
      type: 'policy.example.com/Compliant',
      status: 'False',
      reason: `Policy${'a'.repeat(1018)}`,
      message: 'm'.repeat(32768),
      lastTransitionTime: '2026-01-01T00:00:00Z',
      observedGeneration: 1,
    };
    const own = { ...foreign, type: 'Ready', reason: 'PodsReady', message: '1/1 pods ready' };
    await kubectlOk([
      'patch',
      'sbx',
      'sbx-foreign-condition',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { conditions: [own, foreign] } }),
    ]);
    const stored = (await getJson('sbx', 'sbx-foreign-condition'))['status'] as { conditions: unknown[] };
    expect(stored.conditions).toEqual([own, foreign]);
    // The operator reads such a Sandbox as valid: it never treats a neighbour's condition as malformed.
    const parsed = parseSandbox(await getJson('sbx', 'sbx-foreign-condition'));
    expect(parsed.ok).toBe(true);
  });

  it('shows the SessionReference printer columns via the short name sref', async () => {
    await apply(sessionReference(ns, 'sref-columns', { session: 'workspace_7' }));
    const turn = { status: { turn: { id: 't-7', phase: 'Completed', origin: 'ParentMessage' } } };
    await kubectlOk([
      'patch',
      'sref',
      'sref-columns',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(turn),
    ]);

    const [header, row] = table(await kubectlOk(['get', 'sref', 'sref-columns', '-n', ns]));
    expect(header).toEqual(['NAME', 'SANDBOX', 'SESSION', 'WORKTREE', 'ROLE', 'STATE', 'TURN', 'AGE']);
    expect(row?.slice(0, 7)).toEqual([
      'sref-columns',
      'sbx-a',
      'workspace_7',
      'wt-1',
      'Subagent',
      'Attached',
      'Completed',
    ]);
    const [wideHeader] = table(await kubectlOk(['get', 'sref', 'sref-columns', '-n', ns, '-o', 'wide']));
    expect(wideHeader?.slice(-3)).toEqual(['TURN-ID', 'ROUTE', 'AGE']);
  });

  it('lists both kinds under the category, and selects references by spec.sandbox', async () => {
    await apply(sessionReference(ns, 'sref-other', { sandbox: 'sbx-other', session: 'workspace_9' }));
    // The category `sandbox-operator` expands to both kinds.
    const all = (await kubectlOk(['get', 'sandbox-operator', '-n', ns, '-o', 'name'])).trim().split('\n');
    expect(all).toEqual(
      expect.arrayContaining([
        'sandbox.sandbox.agents.dev/sbx-a',
        'sessionreference.sandbox.agents.dev/sref-other',
      ]),
    );

    // The singular name still names one Sandbox (a category called `sandbox` would shadow it).
    expect((await kubectlOk(['get', 'sandbox', 'sbx-a', '-n', ns, '-o', 'name'])).trim()).toBe(
      'sandbox.sandbox.agents.dev/sbx-a',
    );

    const selected = await kubectlOk([
      'get',
      'sref',
      '-n',
      ns,
      '--field-selector',
      'spec.sandbox=sbx-other',
      '-o',
      'jsonpath={.items[*].metadata.name}',
    ]);
    expect(selected).toBe('sref-other');
  });
});

describe('kubectl explain', () => {
  it.each([
    [
      'sandbox.spec.cleanup',
      [
        'Controller-driven automatic cleanup.',
        'policy',
        'enum: Retain, DeleteWhenUnreferenced',
        'DeleteWhenUnreferenced makes the controller delete it once no SessionReference has remained',
      ],
    ],
    ['sandbox.spec.cleanup.ttlSecondsAfterUnreferenced', ['Seconds without any SessionReference']],
    ['sandbox.status.decision.verdict', ['Exclusive releases the sandbox; every other verdict keeps it.']],
    ['sbx.spec.shellReaper', ['The shell reaper sidecar.', 'gracePeriodSeconds']],
    ['sref.spec.state', ['a tombstone that still blocks destruction']],
    ['sessionreference.spec.worktree', ['absent means it has none']],
  ])('%s shows its description', async (path, expected) => {
    // kubectl wraps descriptions at 80 columns: compare with whitespace collapsed.
    const output = (await kubectlOk(['explain', path])).replace(/\s+/g, ' ');
    for (const text of expected) expect(output).toContain(text);
  });

  it('refuses a field that does not exist', async () => {
    const result = await kubectl(['explain', 'sandbox.spec.colour']);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toContain('colour');
  });
});
