/**
 * An attach racing a deletion either blocks it or is refused (DESIGN: the fence). The controller is paused
 * right before its consistent LIST, so both interleavings are forced, not hoped for:
 * - the reference is written before the LIST: the LIST sees it and the deletion blocks; a later attach on the
 *   same name, reading the Sandbox afterwards, sees the deletion and is refused — and withdraws only its own
 *   write, so the reference that blocks stays; the deletion completes once that reference is forgotten;
 * - the reference is written after the LIST: the attach sees the deletion and is refused, the sandbox goes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxDeletingError, SessionReferences } from '../../../operator/client/session-references.ts';
import { sessionReferenceName } from '../../../operator/client/names.ts';
import type { ControllerPorts } from '../../../operator/controller/ports.ts';
import { kubeConfig, testNamespace } from '../../harness/kube.ts';
import {
  createReference,
  createSandbox,
  deleteSandbox,
  getReference,
  getSandbox,
  untilSandbox,
  sandboxGone,
} from './fixtures.ts';
import { grantOperatorRbac, startOperator, type RunningOperator } from './operator.ts';

const namespace = testNamespace('attach-race');
let operator: RunningOperator;

/** Holds the controller's consistent LIST of references for one sandbox until released. */
class ListGate {
  private release: () => void = () => undefined;
  private entered: () => void = () => undefined;
  private readonly opened = new Promise<void>((resolve) => (this.release = resolve));
  readonly reached = new Promise<void>((resolve) => (this.entered = resolve));
  constructor(readonly sandbox: string) {}
  protected enter(): void {
    this.entered();
  }
  protected wait(): Promise<void> {
    return this.opened;
  }
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

/**
 * Lets the controller's consistent LIST for one sandbox run, then holds its answer until released; says how
 * the cleanup's DELETE that follows it ended.
 */
class AfterListGate extends ListGate {
  private deleteEnded: (outcome: string) => void = () => undefined;
  readonly deleted = new Promise<string>((resolve) => (this.deleteEnded = resolve));
  override decorate = (ports: ControllerPorts): ControllerPorts => ({
    ...ports,
    sandboxes: {
      ...ports.sandboxes,
      delete: async (ns, name, preconditions) => {
        try {
          await ports.sandboxes.delete(ns, name, preconditions);
          if (name === this.sandbox) this.deleteEnded('deleted');
        } catch (error) {
          if (name === this.sandbox) this.deleteEnded(`refused: ${String(error)}`);
          throw error;
        }
      },
    },
    references: {
      ...ports.references,
      listLive: async (ns, sandbox) => {
        const live = await ports.references.listLive(ns, sandbox);
        if (sandbox === this.sandbox) {
          this.enter();
          await this.wait();
        }
        return live;
      },
    },
  });
}

const cleanupGate = new AfterListGate('cleanup-race');
const gates = [new ListGate('written-before-list'), new ListGate('written-after-list'), cleanupGate];
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

const gone = (name: string) => sandboxGone(namespace, name, 60_000);

describe('an attach racing a deletion', () => {
  it('blocks the deletion when its reference is written before the consistent LIST, then is refused', async () => {
    const [gate] = gates;
    await createSandbox(namespace, gate!.sandbox, { worktree: 'wt-1' });
    await untilSandbox(namespace, gate!.sandbox, 'running', (sandbox) => sandbox.status?.phase === 'Running');
    await deleteSandbox(namespace, gate!.sandbox);
    await gate!.reached; // the cache said exclusive; the controller is about to LIST
    // The attach's first half: its reference is written now, before the LIST.
    await createReference(namespace, sessionReferenceName(gate!.sandbox, 'workspace_77'), {
      sandbox: gate!.sandbox,
      session: 'workspace_77',
      worktree: 'wt-9',
    });
    gate!.open();
    const blocked = await untilSandbox(
      namespace,
      gate!.sandbox,
      'blocked',
      (sandbox) => sandbox.status?.phase === 'Blocked',
    );
    expect(blocked.status?.decision).toMatchObject({ verdict: 'Foreign', evidence: 'Index' });
    // An attach on the same name now sees the deletion and is refused. The reference existed before it (it is
    // what blocks the deletion), so the refused attach must leave it in place, not delete it.
    const refused = client().attach(attachRequest(gate!.sandbox));
    await expect(refused).rejects.toBeInstanceOf(SandboxDeletingError);
    await expect(refused).rejects.toMatchObject({ withdrawal: 'Restored' });
    const reference = sessionReferenceName(gate!.sandbox, 'workspace_77');
    expect(await getReference(namespace, reference)).toMatchObject({
      spec: { state: 'Attached', route: 'shared-control-v1/workspace_77' },
    });
    expect((await getSandbox(namespace, gate!.sandbox))?.status?.phase).toBe('Blocked');
    // Forgetting the blocking session lets the deletion finish by itself.
    expect(await client().forget(namespace, gate!.sandbox, 'workspace_77')).toEqual({ kind: 'Forgotten' });
    await gone(gate!.sandbox);
  });

  it('is refused when its reference is written after the consistent LIST', async () => {
    const [, gate] = gates;
    await createSandbox(namespace, gate!.sandbox, { worktree: 'wt-1' });
    await untilSandbox(namespace, gate!.sandbox, 'running', (sandbox) => sandbox.status?.phase === 'Running');
    await deleteSandbox(namespace, gate!.sandbox);
    await gate!.reached;
    gate!.open();
    const attach = client().attach(attachRequest(gate!.sandbox));
    await expect(attach).rejects.toThrow(/being deleted|does not exist/);
    await gone(gate!.sandbox);
  });

  it('either is refused or keeps the sandbox when automatic cleanup is between its LIST and its DELETE', async () => {
    await createSandbox(namespace, cleanupGate.sandbox, {
      worktree: 'wt-9',
      cleanup: { policy: 'DeleteWhenUnreferenced', ttlSecondsAfterUnreferenced: 1 },
    });
    await cleanupGate.reached; // cleanup listed no reference and is about to delete
    let attached: 'attached' | 'refused';
    try {
      await client().attach(attachRequest(cleanupGate.sandbox));
      attached = 'attached';
    } catch (error) {
      if (!(error instanceof SandboxDeletingError)) throw error;
      attached = 'refused';
    }
    cleanupGate.open();
    if (attached === 'attached') {
      // The session was told it is attached: cleanup must not take its sandbox. Its DELETE follows the held
      // LIST; once it has ended the Sandbox shows what it did.
      await cleanupGate.deleted;
      const sandbox = await getSandbox(namespace, cleanupGate.sandbox);
      expect(
        sandbox?.metadata.deletionTimestamp,
        'a session attached to a sandbox that cleanup deleted',
      ).toBeUndefined();
    } else {
      await gone(cleanupGate.sandbox);
    }
    // With the fence, the attach is the one that loses.
    expect(attached).toBe('refused');
  });

  it('succeeds against a live sandbox', async () => {
    await createSandbox(namespace, 'live', { worktree: 'wt-1' });
    const name = await client().attach(attachRequest('live'));
    expect(name).toBe(sessionReferenceName('live', 'workspace_77'));
    await untilSandbox(namespace, 'live', 'counted', (sandbox) => sandbox.status?.references?.foreign === 1);
  });
});
