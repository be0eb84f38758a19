/** Synthetic audit events and operations of one soak namespace, for the checker's unit tests. */
import type { TimedEvent } from '../../soak/audit-log.ts';
import type { OpKind, OpRecord, SandboxSpec, SoakModel } from '../../soak/model.ts';

export const NS = 'soak-test-0';
export const OPERATOR = 'sandbox-operator';
export const sandbox = (over: Partial<SandboxSpec> = {}): SandboxSpec => ({
  name: 'sbx-a',
  worktree: 'wt-1',
  replicas: 1,
  adopted: false,
  manifestKeepsAdoption: false,
  cleanupTtlSeconds: undefined,
  manifestErase: false,
  workspace: false,
  idleSeconds: undefined,
  shellReaper: false,
  ...over,
});

export function op(
  model: SoakModel,
  kind: OpKind,
  at: number,
  end: number,
  extra: Partial<OpRecord> = {},
): OpRecord {
  const record: OpRecord = {
    id: model.ops.length,
    kind,
    detail: kind,
    userAgent: `soak/${NS}/${model.ops.length}/${kind}`,
    startedAt: at,
    endedAt: end,
    outcome: 'ok',
    ...extra,
  };
  model.ops.push(record);
  return record;
}

export function event(
  at: number,
  verb: string,
  resource: string,
  name: string,
  code: number,
  by: string | OpRecord,
  extra: Partial<TimedEvent> = {},
): TimedEvent {
  const agent = typeof by === 'string' ? 'sandbox-operator/v0' : by.userAgent;
  return {
    auditID: `a-${at}`,
    stage: 'ResponseComplete',
    verb,
    requestURI: `/x/${resource}/${name}`,
    userAgent: agent,
    user: { username: typeof by === 'string' ? by : 'admin' },
    objectRef: {
      resource,
      namespace: NS,
      name,
      ...(resource === 'eviction' ? { resource: 'pods', subresource: 'eviction' } : {}),
    },
    responseStatus: { code },
    requestReceivedTimestamp: new Date(at).toISOString(),
    stageTimestamp: new Date(at + 1).toISOString(),
    received: at,
    completed: at + 1,
    ...extra,
  };
}

export const refObject = (state: string, worktree: string) => ({
  metadata: { name: 'ref-r' },
  spec: { sandbox: 'sbx-a', session: 'workspace_1', worktree, state },
});
