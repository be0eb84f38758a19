/**
 * Issue 28's judgements must be able to fail: a pool deletes only unclaimed, unreferenced sandboxes; a claimed
 * one goes only by its own claim's release (after that claim's DELETE), never by a pool nor the garbage
 * collector; the release may forget the claim's reference, nothing else may.
 */
import { describe, expect, it } from 'vitest';
import { LABELS } from '../../../operator/api/names.ts';
import type { TimedEvent } from '../../soak/audit-log.ts';
import { checkSequence } from '../../soak/invariants.ts';
import { SoakModel, type OpRecord } from '../../soak/model.ts';
import { coverageOf } from '../../soak/coverage.ts';
import { event, NS, op, OPERATOR } from './audit-fixtures.ts';

const GC = 'system:serviceaccount:kube-system:generic-garbage-collector';
const SBX = 'pool-x7k2q';

const signatures = (model: SoakModel, events: TimedEvent[]) =>
  checkSequence(model, events, OPERATOR).map((v) => v.signature);

/** A version of the pool's sandbox as a write's answer recorded it (revision = at). */
function version(at: number, labels: Record<string, string>, over: { generation?: string } = {}): TimedEvent {
  return event(at, 'patch', 'sandboxes', SBX, 200, OPERATOR, {
    responseObject: {
      kind: 'Sandbox',
      metadata: {
        name: SBX,
        uid: 'uid-p',
        resourceVersion: String(at),
        labels,
        annotations: { 'sandbox.agents.dev/template-generation': over.generation ?? '1' },
      },
    },
  });
}

const unclaimed = { [LABELS.warmPool]: 'pool' };
const claimed = { [LABELS.warmPool]: 'pool', [LABELS.sandboxClaim]: 'claim-0' };

/** A DELETE of the sandbox preconditioned on the version `revision` (as the pool and the release send it). */
const remove = (at: number, by: string | OpRecord, revision?: number) =>
  event(at, 'delete', 'sandboxes', SBX, 200, by, {
    requestObject: {
      preconditions: {
        uid: 'uid-p',
        ...(revision === undefined ? {} : { resourceVersion: String(revision) }),
      },
    },
  });

const claimDeleted = (model: SoakModel, at: number) =>
  event(at, 'delete', 'sandboxclaims', 'claim-0', 200, op(model, 'delete-sandbox-claim', at - 1, at + 5));

const reference = (at: number, verb: 'create' | 'delete', by: string | OpRecord, claim?: string) =>
  event(at, verb, 'sessionreferences', `${SBX}-ref`, verb === 'create' ? 201 : 200, by, {
    responseObject: {
      kind: 'SessionReference',
      metadata: {
        name: `${SBX}-ref`,
        uid: 'uid-r',
        labels: claim === undefined ? {} : { [LABELS.sandboxClaim]: claim },
      },
      spec: { sandbox: SBX, session: 'workspace_0', state: 'Attached' },
    },
    ...(verb === 'delete' ? { requestObject: { preconditions: { uid: 'uid-r' } } } : {}),
  });

describe('pool-kept', () => {
  it('lets a pool delete an unclaimed, unreferenced sandbox (shrink), and counts it', () => {
    const m = new SoakModel(NS, [], []);
    const events = [version(1000, unclaimed), remove(2000, OPERATOR, 1000)];
    expect(signatures(m, events)).toEqual([]);
    expect(coverageOf(m, events, OPERATOR).poolShrinkDeletions).toBe(1);
  });

  it('counts a deletion of an older template generation as a rollout replacement', () => {
    const m = new SoakModel(NS, [], []);
    const template = event(1500, 'patch', 'sandboxtemplates', 'tpl', 200, op(m, 'rollout', 1499, 1510), {
      responseObject: { kind: 'SandboxTemplate', metadata: { name: 'tpl', generation: 2 } },
    });
    const events = [version(1000, unclaimed), template, remove(2000, OPERATOR, 1000)];
    expect(signatures(m, events)).toEqual([]);
    expect(coverageOf(m, events, OPERATOR).rolloutReplacements).toBe(1);
  });

  it('refuses a pool deletion of a sandbox a session references', () => {
    const m = new SoakModel(NS, [], []);
    const host = op(m, 'attach', 1400, 1600);
    const events = [version(1000, unclaimed), reference(1500, 'create', host), remove(2000, OPERATOR, 1000)];
    expect(signatures(m, events)).toEqual(['pool-kept/operator/referenced']);
  });

  it('lets a pool delete a sandbox while a claim’s binding reference to it exists (its patch will lose)', () => {
    const m = new SoakModel(NS, [], []);
    const events = [
      version(1000, unclaimed),
      reference(1500, 'create', OPERATOR, 'claim-0'),
      remove(2000, OPERATOR, 1000),
    ];
    expect(signatures(m, events)).toEqual([]);
  });

  it('refuses the operator’s deletion of a claimed sandbox before its claim is deleted', () => {
    const m = new SoakModel(NS, [], []);
    expect(signatures(m, [version(1000, claimed), remove(2000, OPERATOR, 1000)])).toEqual([
      'pool-kept/operator/claimed',
    ]);
    const n = new SoakModel(NS, [], []);
    expect(
      signatures(n, [version(1000, claimed), remove(2000, OPERATOR, 1000), claimDeleted(n, 3000)]),
    ).toEqual(['pool-kept/operator/claimed']);
  });

  it('lets the claim’s release delete its sandbox once the claim’s DELETE is recorded', () => {
    const m = new SoakModel(NS, [], []);
    expect(
      signatures(m, [version(1000, claimed), claimDeleted(m, 1500), remove(2000, OPERATOR, 1000)]),
    ).toEqual([]);
  });

  it('never lets the garbage collector of a deleted pool take a claimed sandbox', () => {
    const m = new SoakModel(NS, [], []);
    const gc = {
      ...remove(2000, GC),
      userAgent: `kube-controller-manager/v1.34.0 (linux/amd64) kubernetes/abc/${GC.split(':').at(-1) ?? ''}`,
    };
    expect(signatures(m, [version(1000, claimed), gc])).toEqual([
      'pool-kept/kube-controller-manager/claimed',
    ]);
    const n = new SoakModel(NS, [], []);
    expect(signatures(n, [version(1000, unclaimed), remove(2000, GC)])).toEqual([]);
  });

  it('judges the version the precondition names, not a later one', () => {
    const m = new SoakModel(NS, [], []);
    // The binding labelled it at 1500; a DELETE preconditioned on the unclaimed version 1000 could not succeed,
    // but one preconditioned on 1500 took a claimed sandbox.
    expect(
      signatures(m, [version(1000, unclaimed), version(1500, claimed), remove(2000, OPERATOR, 1500)]),
    ).toEqual(['pool-kept/operator/claimed']);
  });
});

describe('a claim’s release and its reference (no-lost-reference)', () => {
  it('lets the operator forget the claim’s reference once the claim is deleted, not before', () => {
    const m = new SoakModel(NS, [], []);
    m.bound('claim-0', SBX, 1);
    const before = [version(1000, claimed), reference(1100, 'create', OPERATOR, 'claim-0')];
    expect(signatures(m, [...before, claimDeleted(m, 1500), reference(2000, 'delete', OPERATOR)])).toEqual(
      [],
    );
    const n = new SoakModel(NS, [], []);
    n.bound('claim-0', SBX, 1);
    expect(signatures(n, [...before, reference(2000, 'delete', OPERATOR)])).toEqual([
      'no-lost-reference/operator',
    ]);
  });

  it('lets the binding withdraw the reference of a sandbox its patch never labelled (another claim won it)', () => {
    const m = new SoakModel(NS, [], []);
    m.bound('claim-1', SBX, 1);
    const events = [
      version(1000, unclaimed),
      reference(1100, 'create', OPERATOR, 'claim-0'),
      version(1150, { ...unclaimed, [LABELS.sandboxClaim]: 'claim-1' }),
      reference(1200, 'delete', OPERATOR),
    ];
    expect(signatures(m, events)).toEqual([]);
  });
});
