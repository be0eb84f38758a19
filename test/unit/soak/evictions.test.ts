/**
 * The soak lets a pod that had not started be evicted (the eviction API skips its budget then), and only
 * such a pod: once any write may have started it, an eviction that succeeds is a wrongful stop.
 * Seed 20261215 (CI, stop 37): a workspace sandbox's pod, Pending on kwok for want of a bound claim, was
 * evicted 1.5 s after its create; the judge counted it a stop of a live sandbox.
 */
import { describe, expect, it } from 'vitest';
import type { TimedEvent } from '../../soak/audit-log.ts';
import { checkSequence } from '../../soak/invariants.ts';
import { SoakModel } from '../../soak/model.ts';
import { event, NS, op, OPERATOR, sandbox } from './audit-fixtures.ts';

const pod = (phase: string | undefined) => ({
  kind: 'Pod',
  metadata: { name: 'sbx-a-0', uid: 'uid-p' },
  ...(phase === undefined ? {} : { status: { phase } }),
});

const created = (at: number) =>
  event(at, 'create', 'pods', 'sbx-a-0', 201, OPERATOR, { responseObject: pod('Pending') });

/** kwok's (a kubelet's) status write, answered with the pod it stored; no answer at Metadata level. */
const statusWrite = (at: number, phase: string | undefined, answered = true): TimedEvent => ({
  ...event(at, 'patch', 'pods', 'sbx-a-0', 200, 'admin', answered ? { responseObject: pod(phase) } : {}),
  objectRef: { resource: 'pods', subresource: 'status', namespace: NS, name: 'sbx-a-0' },
});

function evicted(at: number, before: (model: SoakModel) => TimedEvent[]): string[] {
  const model = new SoakModel(NS, [], [sandbox()]);
  const eviction = event(at, 'create', 'eviction', 'sbx-a-0', 201, op(model, 'evict-pod', at - 1, at + 5));
  return checkSequence(model, [...before(model), eviction], OPERATOR).map((v) => v.signature);
}

describe('an eviction of a sandbox pod', () => {
  it('is allowed when the pod had not started: created Pending, every write since answered Pending', () => {
    expect(evicted(2000, () => [created(500)])).toEqual([]);
    expect(evicted(2000, () => [created(500), statusWrite(900, 'Pending')])).toEqual([]);
  });

  it('is a wrongful stop once a write started the pod', () => {
    expect(evicted(2000, () => [created(500), statusWrite(900, 'Running')])).toEqual([
      'no-wrongful-stop/evict-pod/live',
    ]);
  });

  it('is a wrongful stop when a write the eviction raced could have started it first', () => {
    // Received before the eviction completed (2001): the API server may have applied it before the eviction read.
    expect(evicted(2000, () => [created(500), statusWrite(2000, 'Running')])).toEqual([
      'no-wrongful-stop/evict-pod/live',
    ]);
    // Received after: the eviction met the pod Pending.
    expect(evicted(2000, () => [created(500), statusWrite(2002, 'Running')])).toEqual([]);
  });

  it('is a wrongful stop when the log cannot say: a write without its answer, or no create seen', () => {
    expect(evicted(2000, () => [created(500), statusWrite(900, undefined, false)])).toEqual([
      'no-wrongful-stop/evict-pod/live',
    ]);
    expect(evicted(2000, () => [])).toEqual(['no-wrongful-stop/evict-pod/live']);
  });

  it('judges the pod’s latest incarnation: a Running one before it does not count', () => {
    const earlier = [created(100), statusWrite(200, 'Running')];
    expect(evicted(2000, () => [...earlier, created(500)])).toEqual([]);
  });
});
