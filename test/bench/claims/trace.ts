/**
 * `BENCH_CLAIMS_TRACE=1`: where a one-at-a-time claim's time goes, from the API server's audit log (its own
 * clock for every request): for each claim, the requests from its create to the next claim's create, as
 * steps — when each arrived after the claim's create and how long the API server took to answer it. The
 * steps' medians over the claims that took the most common path are printed; the gaps between one answer and
 * the next request are the controller's (watch delivery, queue, its own work) and the network's.
 */
import { readFile } from 'node:fs/promises';

/** Every request about claims, sandboxes, references and pods, with its timestamps; no watches, no bodies. */
export const TRACE_AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    verbs: [watch]
  - level: Metadata
    resources:
      - group: sandbox.agents.dev
      - group: ""
        resources: [pods]
      - group: policy
        resources: [poddisruptionbudgets]
      - group: networking.k8s.io
        resources: [networkpolicies]
  - level: None
`;

type AuditEvent = {
  readonly verb: string;
  readonly user: { readonly username: string };
  readonly objectRef?: {
    readonly resource?: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
  };
  readonly responseStatus?: { readonly code?: number };
  readonly requestReceivedTimestamp: string;
  readonly stageTimestamp: string;
};

export type Step = { readonly label: string; readonly startMs: number; readonly serverMs: number };

/** An audit timestamp (RFC 3339 with microseconds) in milliseconds, the microseconds kept. */
const micros = (timestamp: string) => {
  const fraction = (/\.(\d+)Z$/.exec(timestamp)?.[1] ?? '').padEnd(6, '0').slice(0, 6);
  return Date.parse(timestamp.replace(/\.\d+Z$/, 'Z')) + Number(fraction) / 1000;
};

/** The steps of each claim named in `claims` (in creation order), in `namespace`, by `controllerUser`. */
export function claimSteps(
  events: readonly AuditEvent[],
  namespace: string,
  claims: readonly string[],
  controllerUser: (username: string) => boolean,
): Map<string, Step[]> {
  const inNamespace = events
    .filter((e) => e.objectRef?.namespace === namespace)
    .sort((a, b) => micros(a.requestReceivedTimestamp) - micros(b.requestReceivedTimestamp));
  const created = new Map<string, number>();
  for (const e of inNamespace)
    if (e.verb === 'create' && e.objectRef?.resource?.endsWith('claims') && e.objectRef.name !== undefined)
      created.set(e.objectRef.name, micros(e.requestReceivedTimestamp));
  const steps = new Map<string, Step[]>();
  claims.forEach((claim, i) => {
    const start = created.get(claim);
    if (start === undefined) return;
    const end = created.get(claims[i + 1] ?? '') ?? Number.POSITIVE_INFINITY;
    const window = inNamespace.filter((e) => {
      const at = micros(e.requestReceivedTimestamp);
      return at >= start && at < end && controllerUser(e.user.username);
    });
    // The bound sandbox: the one the binding reads (its fence) or patches between the reference and the claim's
    // status, the last such.
    const referenced = window.findIndex((e) => e.objectRef?.resource === 'sessionreferences');
    const written = window.findIndex(
      (e) => e.objectRef?.resource === 'sandboxclaims' && e.objectRef.subresource === 'status',
    );
    const bound = window
      .filter((_, i) => referenced >= 0 && i > referenced && (written < 0 || i < written))
      .filter((e) => e.objectRef?.resource === 'sandboxes' && e.objectRef.subresource === undefined)
      .filter((e) => e.verb === 'get' || e.verb === 'patch')
      .at(-1)?.objectRef?.name;
    const ofClaim = (e: AuditEvent) => {
      const { resource, name } = e.objectRef ?? {};
      if (resource === 'sandboxclaims') return name === claim;
      if (resource === 'sessionreferences') return true;
      return resource === 'sandboxes' && name !== undefined && name === bound;
    };
    steps.set(
      claim,
      window.filter(ofClaim).map((e) => ({
        label: `${e.verb} ${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''} ${e.responseStatus?.code ?? ''}`,
        startMs: micros(e.requestReceivedTimestamp) - start,
        serverMs: micros(e.stageTimestamp) - micros(e.requestReceivedTimestamp),
      })),
    );
  });
  return steps;
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
};

/** The most common path's steps, each with its median arrival after the claim's create and server time. */
export function traceTable(steps: Map<string, Step[]>): string[] {
  const paths = new Map<string, Step[][]>();
  for (const claimSteps of steps.values()) {
    const key = claimSteps.map((s) => s.label).join(' → ');
    paths.set(key, [...(paths.get(key) ?? []), claimSteps]);
  }
  const [path, runs] = [...paths.entries()].sort((a, b) => b[1].length - a[1].length)[0] ?? ['', []];
  if (runs.length === 0) return ['  (no claim traced)'];
  const lines = [
    `  ${runs.length} of ${steps.size} claims took the most common path (${paths.size} paths in all):`,
    '  | step | request | arrives after the create (p50) | gap since the last answer (p50) | API server (p50) |',
    '  | ---- | ------- | ------------------------------ | ------------------------------- | ---------------- |',
  ];
  path.split(' → ').forEach((label, i) => {
    const starts = runs.map((r) => r[i]?.startMs ?? Number.NaN);
    const server = runs.map((r) => r[i]?.serverMs ?? Number.NaN);
    const gaps = runs.map((r) => {
      const prev = r[i - 1];
      const here = r[i];
      return prev === undefined || here === undefined
        ? Number.NaN
        : here.startMs - (prev.startMs + prev.serverMs);
    });
    lines.push(
      `  | ${i + 1} | ${label} | ${median(starts).toFixed(1)} ms | ${i === 0 ? '—' : `${median(gaps).toFixed(1)} ms`} | ${median(server).toFixed(1)} ms |`,
    );
  });
  return lines;
}

export async function readAudit(path: string): Promise<AuditEvent[]> {
  const text = await readFile(path, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as AuditEvent);
}
