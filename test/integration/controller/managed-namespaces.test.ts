/**
 * The per-namespace opt-in (issue 26), the operator's side: run with `--managed-namespace-label`, it leaves a
 * Sandbox in an unlabelled namespace untouched (no finalizer, no pod) and says so once in its log; labelled,
 * the namespace's Sandboxes are reconciled at once. The admission half is operator-writes.test.ts.
 */
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import { kubectlOk, testNamespace } from '../../harness/kube.ts';
import { createSandbox, getSandbox } from './fixtures.ts';
import { eventually, grantOperatorRbac, pending, startOperator, type RunningOperator } from './operator.ts';

const namespace = testNamespace('managed');
const LABEL = 'sandbox.agents.dev/managed=true';
const warnings: string[] = [];
let operator: RunningOperator;

beforeAll(async () => {
  await grantOperatorRbac();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      warnings.push((JSON.parse(chunk.toString()) as { msg: string }).msg);
      done();
    },
  });
  operator = startOperator(
    namespace,
    ['--managed-namespace-label', LABEL],
    undefined,
    undefined,
    pino({ level: 'warn' }, sink),
  );
});
afterAll(async () => {
  await operator.stop();
});

describe('an operator managing labelled namespaces only', () => {
  it('skips a Sandbox in an unlabelled namespace, says it once, and takes it up once the namespace is labelled', async () => {
    await createSandbox(namespace, 'waiting', { worktree: 'wt-1' });
    await createSandbox(namespace, 'waiting-too', { worktree: 'wt-1' });
    await eventually('the skip said in the log', async () => {
      const said = warnings.filter((line) =>
        line.includes(`skipping the Sandboxes of namespace ${namespace}`),
      );
      return Promise.resolve(said.length > 0 ? said : pending(warnings));
    });
    expect((await getSandbox(namespace, 'waiting'))?.metadata.finalizers ?? []).toEqual([]);
    await kubectlOk(['label', 'namespace', namespace, LABEL]);
    await eventually('the finalizer once labelled', async () => {
      const finalizers = (await getSandbox(namespace, 'waiting'))?.metadata.finalizers ?? [];
      return finalizers.includes(EXCLUSIVITY_FINALIZER) ? true : pending(finalizers);
    });
    expect(warnings.filter((line) => line.includes(`namespace ${namespace}:`))).toHaveLength(1);
  });
});
