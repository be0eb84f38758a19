import { describe, expect, it } from 'vitest';
import { judgeReadiness, judgeResume } from '../../../operator/client/resume.ts';

const condition = (type: string, status: string, extra: Record<string, unknown> = {}) => ({
  type,
  status,
  ...extra,
});

describe('judgeResume', () => {
  it('resumes a sandbox its spec suspends, on the version read', () => {
    const body = { metadata: { resourceVersion: '42' }, spec: { operatingMode: 'Suspended' } };
    expect(judgeResume(body)).toEqual({ kind: 'Resume', resourceVersion: '42' });
    expect(judgeResume({ spec: { operatingMode: 'Suspended' } })).toEqual({
      kind: 'Resume',
      resourceVersion: '',
    });
  });

  it('reads the Suspended condition among others, skipping what is not a condition', () => {
    const among = (suspended: string) => ({
      status: { conditions: [7, condition('Ready', 'True'), condition('Suspended', suspended)] },
    });
    expect(judgeResume(among('True'))).toEqual({ kind: 'Idle' });
    expect(judgeResume(among('False'))).toEqual({ kind: 'Running' });
  });

  it('leaves a sandbox suspended as idle to the attach itself, and a running one alone', () => {
    const idle = {
      spec: { operatingMode: 'Running' },
      status: { conditions: [condition('Suspended', 'True')] },
    };
    expect(judgeResume(idle)).toEqual({ kind: 'Idle' });
    const running = {
      spec: { operatingMode: 'Running' },
      status: { conditions: [condition('Suspended', 'False')] },
    };
    expect(judgeResume(running)).toEqual({ kind: 'Running' });
    for (const body of [
      {},
      null,
      'x',
      { spec: 'x' },
      { status: { conditions: 'x' } },
      { status: { conditions: [7] } },
    ])
      expect(judgeResume(body)).toEqual({ kind: 'Running' });
  });
});

describe('judgeReadiness', () => {
  const ready = (observedGeneration: unknown, generation: unknown = 2) => ({
    metadata: { generation },
    status: {
      phase: 'Running',
      conditions: [condition('Ready', 'True', { reason: 'PodsReady', observedGeneration })],
    },
  });

  it('is Ready only with Ready=True recorded for the current generation', () => {
    expect(judgeReadiness(ready(2))).toEqual({ kind: 'Ready' });
    expect(judgeReadiness(ready(1))).toEqual({ kind: 'NotReady', seen: 'phase Running, Ready PodsReady' });
    expect(judgeReadiness({ status: { conditions: [condition('Ready', 'True')] } })).toEqual({
      kind: 'Ready',
    });
    // No generation to compare with: Ready=True stands.
    const noGeneration = { status: { conditions: [condition('Ready', 'True', { observedGeneration: 1 })] } };
    expect(judgeReadiness(noGeneration)).toEqual({ kind: 'Ready' });
  });

  it('says what it saw while not Ready', () => {
    const suspended = {
      metadata: { generation: 3 },
      status: {
        phase: 'Suspended',
        conditions: [condition('Ready', 'False', { reason: 'Suspended', observedGeneration: 3 })],
      },
    };
    expect(judgeReadiness(suspended)).toEqual({ kind: 'NotReady', seen: 'phase Suspended, Ready Suspended' });
    expect(judgeReadiness({ metadata: {} })).toEqual({
      kind: 'NotReady',
      seen: 'phase unknown, Ready not reported',
    });
  });

  it('is Deleting once the sandbox is being deleted, and Gone when it is not there', () => {
    expect(
      judgeReadiness({ ...ready(2), metadata: { generation: 2, deletionTimestamp: '2026-12-01T00:00:00Z' } }),
    ).toEqual({
      kind: 'Deleting',
    });
    expect(judgeReadiness({ ...ready(2), metadata: { generation: 2, deletionTimestamp: null } })).toEqual({
      kind: 'Ready',
    });
    expect(judgeReadiness(undefined)).toEqual({ kind: 'Gone' });
  });
});
