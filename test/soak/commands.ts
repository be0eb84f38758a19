/**
 * What a sequence is made of, as fast-check arbitraries: the sandboxes and sessions of its namespace, and
 * a list of actor operations (fc.commands, so a failure shrinks to the shortest list that still fails).
 * Weights favour the agent host, whose references everything turns on.
 */
import * as fc from 'fast-check';
import type { Role } from '../../operator/api/session-reference.ts';
import {
  attach,
  attachAtCleanup,
  detach,
  forget,
  prune,
  reattachDuringPrune,
  type SequenceContext,
} from './agent-host.ts';
import {
  lateReference,
  requestErase,
  statusRelabelGuard,
  statusRelabelPod,
  statusStripPodFinalizer,
  stripSandboxFinalizer,
} from './admin.ts';
import type { SandboxSpec, SessionSpec, SoakModel } from './model.ts';
import { drainNode } from './nodes.ts';
import { refuseGuards } from './platform.ts';
import {
  attachToClaimed,
  claim,
  CLAIMS,
  deleteClaim,
  deletePool,
  forgetClaimed,
  rollout,
  scalePool,
} from './pools.ts';
import type { Setup } from './sequence.ts';
import {
  annotate,
  setOperatingMode,
  apply,
  deleteGuard,
  deletePod,
  deleteSandbox,
  deleteWorkspaceClaim,
  evictPod,
  lowerReplicas,
  pause,
  relabelPod,
  removeAdoption,
  replace,
  type Propagation,
} from './users.ts';

export type Step = fc.AsyncCommand<SoakModel, SequenceContext>;

class Operation implements Step {
  constructor(
    private readonly label: string,
    private readonly action: (ctx: SequenceContext) => Promise<unknown>,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_model: SoakModel, ctx: SequenceContext): Promise<void> {
    await this.action(ctx);
  }
  toString(): string {
    return this.label;
  }
}

const WORKTREES = ['wt-1', 'wt-1', 'wt-2', undefined] as const;
const ROLES: readonly Role[] = ['Root', 'Subagent', 'Board', 'Ticket'];
const NAMES = ['sbx-a', 'sbx-b', 'sbx-c'] as const;

const sandboxArb = fc.record({
  worktree: fc.constantFrom(...WORKTREES),
  replicas: fc.integer({ min: 1, max: 2 }),
  adopted: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
  manifestKeepsAdoption: fc.boolean(),
  cleanupTtlSeconds: fc.oneof(
    { weight: 3, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) },
  ),
  manifestErase: fc.integer({ min: 0, max: 9 }).map((n) => n < 1),
  workspace: fc.integer({ min: 0, max: 2 }).map((n) => n < 1),
  idle: fc.integer({ min: 5, max: 12 }),
  idling: fc.boolean(),
});

const sessionArb = fc.record({
  worktree: fc.constantFrom(...WORKTREES),
  role: fc.constantFrom(...ROLES),
});

export const setupArb: fc.Arbitrary<Setup> = fc
  .record({
    sandboxes: fc.array(sandboxArb, { minLength: 1, maxLength: 3 }),
    sessions: fc.array(sessionArb, { minLength: 2, maxLength: 4 }),
    guardsRefusedAtStart: fc.integer({ min: 0, max: 6 }).map((n) => n < 1),
    stripAfterNamespaceDeleteMs: fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 3000 }) },
    ),
    // Issue 28: a warm pool of 1–3 in half the sequences.
    pool: fc.oneof(
      { weight: 1, arbitrary: fc.constant(undefined) },
      {
        weight: 1,
        arbitrary: fc.record({
          replicas: fc.integer({ min: 1, max: 3 }),
          updateStrategy: fc.constantFrom<'OnReplenish' | 'Recreate'>('OnReplenish', 'Recreate'),
        }),
      },
    ),
  })
  .map(({ sandboxes, sessions, ...rest }) => ({
    ...rest,
    // spec.idle only where the CRD allows it: with a persistent workspace (half of those).
    sandboxes: sandboxes.map(({ idle, idling, ...s }, i): SandboxSpec => ({
      ...s,
      name: NAMES[i] ?? `sbx-${i}`,
      idleSeconds: s.workspace && idling ? idle : undefined,
      // The second sandbox of a sequence runs the shell reaper: no new draw, so every seed replays as before.
      shellReaper: i === 1,
    })),
    sessions: sessions.map((s, i): SessionSpec => ({ ...s, id: `workspace_${i}` })),
  }));

export function stepArbs(setup: Setup): fc.Arbitrary<Step>[] {
  const box = fc.constantFrom(...setup.sandboxes.map((s) => s.name));
  const session = fc.constantFrom(...setup.sessions.map((s) => s.id));
  const ordinal = fc.integer({ min: 0, max: 1 });
  const propagation = fc.constantFrom<Propagation>('Background', 'Foreground', 'Orphan');
  const worktree = fc.constantFrom(...new Set(setup.sessions.map((s) => s.worktree)));
  const cleaned = setup.sandboxes.filter((s) => s.cleanupTtlSeconds !== undefined).map((s) => s.name);
  const pairs = setup.sandboxes.filter((s) => s.replicas > 1).map((s) => s.name);
  const op = (label: string, action: (ctx: SequenceContext) => Promise<unknown>) =>
    new Operation(label, action);
  const weighted = (weight: number, arb: fc.Arbitrary<Step>) => Array.from({ length: weight }, () => arb);
  return [
    ...weighted(
      4,
      fc.tuple(session, box).map(([s, b]) => op(`attach ${s} to ${b}`, (c) => attach(c, s, b))),
    ),
    ...weighted(
      2,
      fc.tuple(session, box).map(([s, b]) => op(`detach ${s} from ${b}`, (c) => detach(c, s, b))),
    ),
    ...weighted(
      2,
      fc.tuple(session, box).map(([s, b]) => op(`forget ${s} on ${b}`, (c) => forget(c, s, b))),
    ),
    worktree.map((w) => op(`prune worktree ${w ?? 'none'}`, (c) => prune(c, w))),
    fc
      .tuple(session, box, fc.integer({ min: 0, max: 30 }))
      .map(([s, b, ms]) =>
        op(`re-attach ${s} to ${b} ${ms} ms into a prune of its worktree`, (c) =>
          reattachDuringPrune(c, s, b, ms),
        ),
      ),
    ...(cleaned.length === 0
      ? []
      : [
          fc
            .tuple(session, fc.constantFrom(...cleaned), fc.integer({ min: -800, max: 800 }))
            .map(([s, b, ms]) =>
              op(`attach ${s} to ${b} at its cleanup TTL ${ms} ms`, (c) => attachAtCleanup(c, s, b, ms)),
            ),
        ]),
    ...weighted(
      2,
      fc
        .tuple(box, propagation)
        .map(([b, p]) => op(`user deletes ${b} (${p})`, (c) => deleteSandbox(c, b, p, 'user'))),
    ),
    box.map((b) => op(`gitops prunes ${b} (Foreground)`, (c) => deleteSandbox(c, b, 'Foreground', 'gitops'))),
    fc.tuple(box, ordinal).map(([b, o]) => op(`user deletes pod ${b}-${o}`, (c) => deletePod(c, b, o))),
    fc.tuple(box, ordinal).map(([b, o]) => op(`drain evicts pod ${b}-${o}`, (c) => evictPod(c, b, o))),
    fc
      .tuple(box, ordinal, fc.boolean())
      .map(([b, o, r]) =>
        op(`user ${r ? 'removes' : 'changes'} the sandbox label of pod ${b}-${o}`, (c) =>
          relabelPod(c, b, o, r),
        ),
      ),
    fc.tuple(box, ordinal).map(([b, o]) =>
      op(`user removes the sandbox label of pod ${b}-${o}, then deletes it`, async (c) => {
        await relabelPod(c, b, o, true);
        await deletePod(c, b, o);
      }),
    ),
    box.map((b) => op(`user deletes the PodDisruptionBudget of ${b}`, (c) => deleteGuard(c, b))),
    fc.tuple(box, ordinal, fc.integer({ min: 0, max: 3000 })).map(([b, o, ms]) =>
      op(
        `user deletes the PodDisruptionBudget of ${b}; ${ms} ms later a drain evicts pod ${b}-${o}`,
        async (c) => {
          await deleteGuard(c, b);
          await pause(c, ms);
          await evictPod(c, b, o);
        },
      ),
    ),
    // The class of seed 20261215: a guard counting fewer pods than run. Lowering is refused by the CRD.
    ...(pairs.length === 0
      ? []
      : [
          fc
            .tuple(fc.constantFrom(...pairs), fc.constantFrom<'scale' | 'spec'>('scale', 'spec'))
            .map(([b, via]) =>
              op(
                `user lowers ${b}'s spec.replicas to 1 through ${via}, then a drain evicts pod ${b}-1`,
                async (c) => {
                  await lowerReplicas(c, b, via);
                  await evictPod(c, b, 1);
                },
              ),
            ),
        ]),
    box.map((b) => op(`user removes the adoption annotation of ${b}`, (c) => removeAdoption(c, b))),
    fc.tuple(box, fc.nat(99)).map(([b, n]) => op(`user annotates ${b}`, (c) => annotate(c, b, n))),
    // Issue 27: a suspension stops the pods of a live sandbox (allowed by the CRD only with a workspace on
    // claims: the others' are refused), a resume brings them back; a replace from Git resumes it too.
    box.map((b) => op(`user suspends ${b}`, (c) => setOperatingMode(c, b, 'Suspended'))),
    box.map((b) => op(`user resumes ${b}`, (c) => setOperatingMode(c, b, 'Running'))),
    fc
      .tuple(box, fc.constantFrom('user', 'gitops'))
      .map(([b, by]) => op(`${by} replaces ${b} from its manifest`, (c) => replace(c, b, by))),
    box.map((b) => op(`gitops applies ${b}`, (c) => apply(c, b))),
    box.map((b) => op(`user deletes the workspace claim of ${b}`, (c) => deleteWorkspaceClaim(c, b))),
    // A node drain: the node a pod runs on (one of the sequence's two) cordoned for a while, then uncordoned. Reschedule sandboxes (those
    // with a workspace) move off it; the others' pods stay, their drain Blocked.
    ...weighted(
      2,
      fc
        .tuple(box, ordinal, fc.integer({ min: 3000, max: 10_000 }))
        .map(([b, o, ms]) =>
          op(`administrator drains the node of pod ${b}-${o} for ${ms} ms`, (c) =>
            drainNode(c, `${b}-${o}`, ms),
          ),
        ),
    ),
    ...weighted(
      2,
      fc.integer({ min: 200, max: 2500 }).map((ms) => op(`pause ${ms} ms`, (c) => pause(c, ms))),
    ),
    ...issue25Moves(box, session, ordinal),
    ...(setup.pool === undefined ? [] : poolMoves(session)),
  ];
}

/**
 * Issue 28's moves (pools.ts), weighted to be about a third of a pool sequence's operations: claims made (warm, or cold from the template) and deleted, other sessions
 * attaching to a claimed sandbox, the pool resized through /scale and its spec, the template rolled out under
 * either strategy, the pool deleted.
 */
function poolMoves(session: fc.Arbitrary<string>): fc.Arbitrary<Step>[] {
  const op = (label: string, action: (ctx: SequenceContext) => Promise<unknown>) =>
    new Operation(label, action);
  const name = fc.constantFrom(...CLAIMS);
  const weighted = (weight: number, arb: fc.Arbitrary<Step>) => Array.from({ length: weight }, () => arb);
  return [
    ...weighted(
      6,
      fc
        .tuple(name, session, fc.integer({ min: 0, max: 3 }))
        .map(([c, s, n]) =>
          op(`user claims ${c} for ${s}${n === 0 ? ' (cold)' : ''}`, (x) => claim(x, c, s, n === 0)),
        ),
    ),
    ...weighted(
      3,
      name.map((c) => op(`user deletes ${c}`, (x) => deleteClaim(x, c))),
    ),
    ...weighted(
      4,
      fc
        .tuple(session, name)
        .map(([s, c]) => op(`${s} attaches to the sandbox of ${c}`, (x) => attachToClaimed(x, s, c))),
    ),
    ...weighted(
      2,
      fc
        .tuple(session, name)
        .map(([s, c]) => op(`${s} forgets the sandbox of ${c}`, (x) => forgetClaimed(x, s, c))),
    ),
    ...weighted(
      3,
      fc
        .tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom<'scale' | 'spec'>('scale', 'spec'))
        .map(([n, via]) =>
          op(`administrator scales the pool to ${n} through ${via}`, (x) => scalePool(x, n, via)),
        ),
    ),
    ...weighted(
      2,
      fc
        .constantFrom<'OnReplenish' | 'Recreate'>('OnReplenish', 'Recreate')
        .map((st) => op(`administrator rolls the template out (${st})`, (x) => rollout(x, st))),
    ),
    // A shared claimed sandbox: its claim's deletion must leave it (Blocked) while the other session holds it.
    ...weighted(
      2,
      fc.tuple(name, session, session, fc.integer({ min: 0, max: 1500 })).map(([c, s, other, ms]) =>
        op(
          `user claims ${c} for ${s}, ${other} attaches to its sandbox, ${ms} ms later ${c} is deleted`,
          async (x) => {
            await claim(x, c, s, false);
            await attachToClaimed(x, other, c);
            await pause(x, ms);
            await deleteClaim(x, c);
          },
        ),
      ),
    ),
    fc.constant(op('administrator deletes the pool', (x) => deletePool(x))),
  ];
}

/**
 * Issue 25's moves: status-subresource writes, a Sandbox's finalizer stripped, the platform's refusal of the
 * guards toggled, late references (alone, and right after the deletion they land on) and erase requests.
 */
function issue25Moves(
  box: fc.Arbitrary<string>,
  session: fc.Arbitrary<string>,
  ordinal: fc.Arbitrary<number>,
): fc.Arbitrary<Step>[] {
  const op = (label: string, action: (ctx: SequenceContext) => Promise<unknown>) =>
    new Operation(label, action);
  const withdraw = fc.integer({ min: 0, max: 4000 });
  return [
    fc
      .tuple(box, ordinal, fc.boolean())
      .map(([b, o, r]) =>
        op(`user ${r ? 'removes' : 'changes'} the sandbox label of pod ${b}-${o} through pods/status`, (c) =>
          statusRelabelPod(c, b, o, r),
        ),
      ),
    fc
      .tuple(box, ordinal)
      .map(([b, o]) =>
        op(`user strips the finalizer of pod ${b}-${o} through pods/status`, (c) =>
          statusStripPodFinalizer(c, b, o),
        ),
      ),
    box.map((b) =>
      op(`user changes the label of the PodDisruptionBudget of ${b} through its status`, (c) =>
        statusRelabelGuard(c, b),
      ),
    ),
    box.map((b) => op(`user strips the finalizer of ${b}`, (c) => stripSandboxFinalizer(c, b))),
    fc
      .boolean()
      .map((on) =>
        op(on ? 'platform refuses zero budgets' : 'platform lifts its refusal', (c) => refuseGuards(c, on)),
      ),
    fc
      .tuple(session, box, withdraw)
      .map(([s, b, ms]) =>
        op(`late reference of ${s} to ${b}, withdrawn ${ms} ms later`, (c) => lateReference(c, s, b, ms)),
      ),
    fc.tuple(session, box, withdraw).map(([s, b, ms]) =>
      op(`user deletes ${b}; late reference of ${s} to it, withdrawn ${ms} ms later`, async (c) => {
        await deleteSandbox(c, b, 'Background', 'user');
        await lateReference(c, s, b, ms);
      }),
    ),
    ...Array.from({ length: 2 }, () =>
      box.map((b) => op(`administrator requests an erase of ${b}'s references`, (c) => requestErase(c, b))),
    ),
  ];
}

export const sequenceArb = setupArb.chain((setup) =>
  fc.record({
    setup: fc.constant(setup),
    steps: fc.commands(stepArbs(setup), { maxCommands: 16, size: 'large' }),
  }),
);
