import { describe, expect, it } from 'vitest';
import { judgePodNameHolder } from '../../../operator/controller/live/pod-name.ts';
import type { PodNameHolder } from '../../../operator/controller/ports.ts';

const sandbox = { name: 'shared', uid: 'uid-now' };
const holder = (over: Partial<PodNameHolder> = {}): PodNameHolder => ({
  uid: 'pod-uid',
  sandboxLabel: 'shared',
  controller: undefined,
  deleting: false,
  ...over,
});
const owner = (kind: string, name: string, uid: string) => ({ kind, name, uid });

describe('judgePodNameHolder', () => {
  it('counts the sandbox’s own pod as its own, whatever its label says', () => {
    expect(
      judgePodNameHolder(sandbox, 'shared-0', holder({ controller: owner('Sandbox', 'shared', 'uid-now') })),
    ).toEqual({ kind: 'Ours' });
  });

  it('waits for an earlier incarnation’s pod and for a terminating one', () => {
    expect(
      judgePodNameHolder(
        sandbox,
        'shared-0',
        holder({ controller: owner('Sandbox', 'shared', 'uid-before') }),
      ),
    ).toEqual({ kind: 'Wait', why: expect.stringContaining('earlier Sandbox shared') });
    expect(judgePodNameHolder(sandbox, 'shared-0', holder({ deleting: true }))).toEqual({
      kind: 'Wait',
      why: 'pod shared-0 is terminating; its replacement follows',
    });
  });

  it('replaces an unowned pod labelled for this sandbox (a restore’s), by the uid it read', () => {
    expect(judgePodNameHolder(sandbox, 'shared-0', holder())).toEqual({
      kind: 'Replace',
      uid: 'pod-uid',
      why:
        "pod shared-0 carries this sandbox's label but no owner (as a backup restore leaves it, or a squatter): " +
        "it is not guarded, so the operator deletes it and creates the sandbox's own pod under its name",
    });
  });

  it('calls any other holder a misconfiguration naming it and the fix, and never replaces it', () => {
    const cases: [Partial<PodNameHolder>, string][] = [
      [{ sandboxLabel: undefined }, 'owned by nothing, label absent'],
      [{ sandboxLabel: 'other' }, 'owned by nothing, label other'],
      [{ controller: owner('ReplicaSet', 'web', 'x') }, 'controlled by ReplicaSet web, label shared'],
      [{ controller: owner('Sandbox', 'other', 'x') }, 'controlled by Sandbox other, label shared'],
      [{ controller: owner('Sandbox', 'other', 'x'), deleting: true }, 'controlled by Sandbox other'],
    ];
    for (const [over, says] of cases.slice(0, 4)) {
      const judgement = judgePodNameHolder(sandbox, 'shared-0', holder(over));
      expect(judgement, says).toEqual({
        kind: 'Taken',
        misconfiguration: {
          reason: 'PodNameTaken',
          refused: expect.stringContaining(`(${says})`),
          fix: "delete or rename pod shared-0; the operator then creates the sandbox's pod under that name",
        },
      });
    }
    // Another's pod that is terminating frees the name by itself.
    expect(judgePodNameHolder(sandbox, 'shared-0', holder(cases[4]![0])).kind).toBe('Wait');
  });
});
