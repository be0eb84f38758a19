/**
 * `kubectl sandbox claims` and `kubectl sandbox pools`: one row per SandboxClaim — what it asks for, what it
 * is bound to, how it launched, whether it is Ready and why not — and per SandboxWarmPool — its template, how
 * many it keeps and how many are ready. Pure; read field by field from the raw objects, so a claim or pool of
 * a newer schema still shows what this plugin knows of it.
 */
import { age, table } from './format.ts';

export type ClaimRow = {
  readonly namespace: string;
  readonly name: string;
  /** `pool/<name>` or `template/<name>`. */
  readonly source: string | undefined;
  readonly session: string | undefined;
  readonly sandbox: string | undefined;
  readonly launchType: string | undefined;
  readonly bound: string | undefined;
  readonly ready: string | undefined;
  /** The reason of the first condition that is not True: what the claim waits for. */
  readonly waitingFor: string | undefined;
  readonly createdAt: string | undefined;
};

export type PoolRow = {
  readonly namespace: string;
  readonly name: string;
  readonly template: string | undefined;
  readonly desired: number | undefined;
  readonly replicas: number | undefined;
  readonly ready: number | undefined;
  readonly updateStrategy: string | undefined;
  readonly createdAt: string | undefined;
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const at = (value: unknown, ...path: string[]): unknown =>
  path.reduce<unknown>((current, key) => (isRecord(current) ? current[key] : undefined), value);
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
const count = (value: unknown) => (typeof value === 'number' ? value : undefined);
const conditionsOf = (raw: unknown) => {
  const list = at(raw, 'status', 'conditions');
  return Array.isArray(list) ? list.filter(isRecord) : [];
};
const byName = <T extends { namespace: string; name: string }>(a: T, b: T) =>
  `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`);

export function claimRows(claims: readonly unknown[]): ClaimRow[] {
  return claims
    .map((raw): ClaimRow => {
      const pool = text(at(raw, 'spec', 'warmPoolRef', 'name'));
      const template = text(at(raw, 'spec', 'templateRef', 'name'));
      const conditions = conditionsOf(raw);
      const status = (type: string) => text(conditions.find((c) => c['type'] === type)?.['status']);
      const waiting = conditions.find((c) => c['status'] !== 'True');
      return {
        namespace: text(at(raw, 'metadata', 'namespace')) ?? '',
        name: text(at(raw, 'metadata', 'name')) ?? '',
        source:
          pool !== undefined ? `pool/${pool}` : template !== undefined ? `template/${template}` : undefined,
        session: text(at(raw, 'spec', 'session')),
        sandbox: text(at(raw, 'status', 'sandbox')),
        launchType: text(at(raw, 'status', 'launchType')),
        bound: status('Bound'),
        ready: status('Ready'),
        waitingFor: waiting === undefined ? undefined : text(waiting['reason']),
        createdAt: text(at(raw, 'metadata', 'creationTimestamp')),
      };
    })
    .sort(byName);
}

export function poolRows(pools: readonly unknown[]): PoolRow[] {
  return pools
    .map((raw): PoolRow => ({
      namespace: text(at(raw, 'metadata', 'namespace')) ?? '',
      name: text(at(raw, 'metadata', 'name')) ?? '',
      template: text(at(raw, 'spec', 'templateRef', 'name')),
      desired: count(at(raw, 'spec', 'replicas')),
      replicas: count(at(raw, 'status', 'replicas')),
      ready: count(at(raw, 'status', 'readyReplicas')),
      updateStrategy: text(at(raw, 'spec', 'updateStrategy', 'type')),
      createdAt: text(at(raw, 'metadata', 'creationTimestamp')),
    }))
    .sort(byName);
}

const NONE = '<none>';
const withNamespace = (all: boolean, headers: string[], rows: { namespace: string; cells: string[] }[]) =>
  table(
    all ? ['NAMESPACE', ...headers] : headers,
    rows.map((row) => (all ? [row.namespace, ...row.cells] : row.cells)),
  );

export function renderClaimList(rows: readonly ClaimRow[], all: boolean, now: Date): string {
  if (rows.length === 0)
    return all ? 'No SandboxClaims found.\n' : 'No SandboxClaims found in this namespace.\n';
  return withNamespace(
    all,
    ['NAME', 'FROM', 'SESSION', 'SANDBOX', 'LAUNCH', 'BOUND', 'READY', 'WAITING FOR', 'AGE'],
    rows.map((row) => ({
      namespace: row.namespace,
      cells: [
        row.name,
        row.source ?? NONE,
        row.session ?? NONE,
        row.sandbox ?? NONE,
        row.launchType ?? NONE,
        row.bound ?? NONE,
        row.ready ?? NONE,
        row.waitingFor ?? NONE,
        row.createdAt === undefined ? NONE : age(row.createdAt, now),
      ],
    })),
  );
}

export function renderPoolList(rows: readonly PoolRow[], all: boolean, now: Date): string {
  if (rows.length === 0)
    return all ? 'No SandboxWarmPools found.\n' : 'No SandboxWarmPools found in this namespace.\n';
  const number = (value: number | undefined) => (value === undefined ? NONE : String(value));
  return withNamespace(
    all,
    ['NAME', 'TEMPLATE', 'DESIRED', 'CURRENT', 'READY', 'UPDATE', 'AGE'],
    rows.map((row) => ({
      namespace: row.namespace,
      cells: [
        row.name,
        row.template ?? NONE,
        number(row.desired),
        number(row.replicas),
        number(row.ready),
        row.updateStrategy ?? NONE,
        row.createdAt === undefined ? NONE : age(row.createdAt, now),
      ],
    })),
  );
}
