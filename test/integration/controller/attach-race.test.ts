/**
 * An attach racing a deletion either blocks it or is refused (DESIGN: the fence). The controller is paused
 * right before its consistent LIST, so both interleavings are forced, not hoped for:
 * - the reference is written before the LIST: the LIST sees it and the deletion blocks; the attach, reading the
 *   Sandbox afterwards, sees the deletion and withdraws; the deletion then completes;
 * - the reference is written after the LIST: the attach sees the deletion and is refused, the sandbox goes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxDeletingError, SessionReferences } from '../../../operator/client/session-references.ts';
import { sessionReferenceName } from '../../../operator/client/names.ts';
import type { ControllerPorts } from '../../../operator/controller/ports.ts';
import { kubeConfig, testNamespace } from '../../harness/kube.ts';
import { createReference, createSandbox, deleteSandbox, getSandbox } from './fixtures.ts';
import { eventually, grantOperatorRbac, startOperator, type RunningOperator } from './operator.ts';

const namespace = testNamespace('attach-race');
let operator: RunningOperator;

/** Holds the controller's consistent LIST of references for one sandbox until released. */
class ListGate {
  private release: () => void = () => undefined;
  private entered: () => void = () => undefined;
  private readonly opened = new Promise<void>((resolve) => (this.release = resolve));
  readonly reached = new Promise<void>((resolve) => (this.entered = resolve));
  constructor(readonly sandbox: string) {}
  decorate = (ports: ControllerPorts): ControllerPorts => ({
    ...ports,
    references: {
      ...ports.references,
      listLive: async (ns, sandbox) => {
        if (sandbox === this.sandbox) {
          this.entered();
          await this.opened;
        }
        return ports.references.listLive(ns, sandbox);
      },
    },
  });
  open(): void {
    this.release();
  }
}

const gates = [new ListGate('written-before-list'), new ListGate('written-after-list')];
const client = () => new SessionReferences(kubeConfig());
const attachRequest = (sandbox: string) => ({
  namespace,
  sandbox,
  session: 'workspace_77',
  worktree: 'wt-9',
  route: 'shared-control-v1/x',
  role: 'Root' as const,
});

beforeAll(async () => {
  await grantOperatorRbac();
  operator = startOperator(namespace, [], (ports) => gates.reduce((acc, gate) => gate.decorate(acc), ports));
});
afterAll(async () => {
  for (const gate of gates) gate.open();
  await operator.stop();
});

const gone = (name: string) =>
  eventually(
    `${name} gone`,
    async () => ((await getSandbox(namespace, name)) === undefined ? true : undefined),
    60_000,
  );

describe('an attach racing a deletion', () => {
  it('blocks the deletion when its reference is written before the consistent LIST, then is refused', async () => {
    const [gate] = gates;
    await createSandbox(namespace, gate!.sandbox, { worktree: 'wt-1' });
    await eventually('running', async () =>
      (await getSandbox(namespace, gate!.sandbox))?.status?.phase === 'Running' ? true : undefined,
    );
    await deleteSandbox(namespace, gate!.sandbox);
    await gate!.reached; // the cache said exclusive; the controller is about to LIST
    // The attach's first half: its reference is written now, before the LIST.
    await createReference(namespace, sessionReferenceName(gate!.sandbox, 'workspace_77'), {
      sandbox: gate!.sandbox,
      session: 'workspace_77',
      worktree: 'wt-9',
    });
    gate!.open();
    const blocked = await eventually('blocked', async () => {
      const sandbox = await getSandbox(namespace, gate!.sandbox);
      return sandbox?.status?.phase === 'Blocked' ? sandbox : undefined;
    });
    expect(blocked.status?.decision).toMatchObject({ verdict: 'Foreign', evidence: 'Index' });
    // The attach's second half: the live read sees the deletion, so the attach withdraws and is refused.
    await expect(client().attach(attachRequest(gate!.sandbox))).rejects.toBeInstanceOf(SandboxDeletingError);
    await gone(gate!.sandbox);
  });

  it('is refused when its reference is written after the consistent LIST', async () => {
    const [, gate] = gates;
    await createSandbox(namespace, gate!.sandbox, { worktree: 'wt-1' });
    await eventually('running', async () =>
      (await getSandbox(namespace, gate!.sandbox))?.status?.phase === 'Running' ? true : undefined,
    );
    await deleteSandbox(namespace, gate!.sandbox);
    await gate!.reached;
    gate!.open();
    const attach = client().attach(attachRequest(gate!.sandbox));
    await expect(attach).rejects.toThrow(/being deleted|does not exist/);
    await gone(gate!.sandbox);
  });

  it('succeeds against a live sandbox', async () => {
    await createSandbox(namespace, 'live', { worktree: 'wt-1' });
    const name = await client().attach(attachRequest('live'));
    expect(name).toBe(sessionReferenceName('live', 'workspace_77'));
    await eventually('counted', async () =>
      (await getSandbox(namespace, 'live'))?.status?.references?.foreign === 1 ? true : undefined,
    );
  });
});
