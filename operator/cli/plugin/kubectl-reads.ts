/**
 * The plugin's ports over `kubectl get -o json`: the user's kubectl, kubeconfig, credentials and global
 * flags (--as, --context, --server, --request-timeout, …) apply as they do to any kubectl command, and the
 * plugin loads no Kubernetes client of its own (which is what makes a call take ~0.2 s instead of ~2 s).
 */
import { execFile } from 'node:child_process';
import { GROUP, LABELS, SANDBOX, SESSION_REFERENCE } from '../../api/names.ts';
import { parseSandbox, parseSessionReference } from '../../api/parse.ts';
import type { Scope } from './args.ts';
import { PluginError } from './errors.ts';
import type { EventSummary, PluginPorts, PodSummary } from './ports.ts';

export type KubectlResult = { readonly code: number; readonly stdout: string; readonly stderr: string };
/** Runs `kubectl <args>`; resolves with its exit code, rejects only when kubectl could not be run. */
export type Kubectl = (args: readonly string[]) => Promise<KubectlResult>;

const MAX_OUTPUT = 256 * 1024 * 1024;

export function kubectlProcess(binary: string, globalFlags: readonly string[]): Kubectl {
  return (args) =>
    new Promise((resolve, reject) => {
      execFile(
        binary,
        [...args, ...globalFlags],
        { maxBuffer: MAX_OUTPUT, encoding: 'utf8' },
        (error, stdout, stderr) => {
          if (error !== null && typeof error.code !== 'number')
            reject(
              new PluginError('RequestFailed', `could not run ${binary}: ${error.message}`, { cause: error }),
            );
          else resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr });
        },
      );
    });
}

/** kubectl's `Error from server (Reason): message`, as the plugin's error naming what it read. */
const HTTP_STATUS: Record<string, number> = { Forbidden: 403, Unauthorized: 401, NotFound: 404 };

export function failedRead(what: string, result: KubectlResult): PluginError {
  const text = result.stderr.trim() || result.stdout.trim() || `kubectl exited ${result.code}`;
  const server = /Error from server \((\w+)\): (.*)/s.exec(text);
  const reason = server?.[1];
  const message = (server?.[2] ?? text.replace(/^error: /, '')).trim();
  const status = reason === undefined ? undefined : HTTP_STATUS[reason];
  if (reason === 'Forbidden')
    return new PluginError('Forbidden', `reading ${what} was refused (HTTP 403): ${message}`);
  return new PluginError(
    'RequestFailed',
    `reading ${what} failed${status === undefined ? '' : ` (HTTP ${status})`}: ${message}`,
  );
}

const scopeFlags = (scope: Scope | { readonly namespace: string | undefined }): string[] =>
  'allNamespaces' in scope && scope.allNamespaces
    ? ['--all-namespaces']
    : 'namespace' in scope && scope.namespace !== undefined
      ? ['--namespace', scope.namespace]
      : [];

const record = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const items = (list: unknown): unknown[] => {
  const value = record(list)['items'];
  return Array.isArray(value) ? value : [];
};

const podSummary = (raw: unknown): PodSummary => {
  const metadata = record(record(raw)['metadata']);
  const finalizers = metadata['finalizers'];
  return {
    name: text(metadata['name']) ?? '',
    phase: text(record(record(raw)['status'])['phase']),
    deleting: metadata['deletionTimestamp'] !== undefined,
    finalizers: Array.isArray(finalizers) ? finalizers.filter((f): f is string => typeof f === 'string') : [],
  };
};

const eventSummary = (raw: unknown): EventSummary => {
  const event = record(raw);
  const when =
    text(event['lastTimestamp']) ??
    text(event['eventTime']) ??
    text(event['firstTimestamp']) ??
    text(record(event['metadata'])['creationTimestamp']);
  const count = event['count'];
  return {
    type: text(event['type']) ?? '',
    reason: text(event['reason']) ?? '',
    message: text(event['message']) ?? '',
    count: typeof count === 'number' ? count : 1,
    lastSeen: when === undefined ? undefined : new Date(when),
  };
};

const named = (namespace: string | undefined, name: string) =>
  namespace === undefined ? name : `${namespace}/${name}`;
const seen = (event: EventSummary) => event.lastSeen?.getTime() ?? 0;
const byName = (a: PodSummary, b: PodSummary) => a.name.localeCompare(b.name);

export function kubectlReads(kubectl: Kubectl): PluginPorts {
  // Fully qualified, so a neighbour's `Sandbox` kind (agents.x-k8s.io) is never read instead.
  const sandboxes = `${SANDBOX.plural}.${GROUP}`;
  const references = `${SESSION_REFERENCE.plural}.${GROUP}`;
  async function get(what: string, args: readonly string[]): Promise<unknown> {
    const result = await kubectl(['get', ...args, '--output', 'json']);
    if (result.code !== 0) throw failedRead(what, result);
    if (result.stdout.trim() === '') return undefined; // --ignore-not-found on a missing object
    try {
      return JSON.parse(result.stdout) as unknown;
    } catch (error) {
      throw new PluginError('RequestFailed', `reading ${what}: kubectl printed no JSON`, { cause: error });
    }
  }
  const one = (resource: string, namespace: string | undefined, name: string) => [
    resource,
    name,
    '--ignore-not-found',
    ...scopeFlags({ namespace }),
  ];
  return {
    objects: {
      async sandbox(namespace, name) {
        const raw = await get(`${SANDBOX.kind} ${named(namespace, name)}`, one(sandboxes, namespace, name));
        return raw === undefined ? undefined : parseSandbox(raw);
      },
      async reference(namespace, name) {
        const raw = await get(
          `${SESSION_REFERENCE.kind} ${named(namespace, name)}`,
          one(references, namespace, name),
        );
        return raw === undefined ? undefined : parseSessionReference(raw);
      },
      async references(namespace, sandbox) {
        const list = await get(`the SessionReferences of ${SANDBOX.kind} ${named(namespace, sandbox)}`, [
          references,
          `--field-selector=spec.sandbox=${sandbox}`,
          ...scopeFlags({ namespace }),
        ]);
        return items(list).map(parseSessionReference);
      },
      async pods(namespace, sandbox) {
        const list = await get(`the pods of ${SANDBOX.kind} ${named(namespace, sandbox)}`, [
          'pods',
          `--selector=${LABELS.sandbox}=${sandbox}`,
          ...scopeFlags({ namespace }),
        ]);
        return items(list).map(podSummary).sort(byName);
      },
    },
    lists: {
      async sandboxes(scope) {
        return items(await get('Sandboxes', [sandboxes, ...scopeFlags(scope)])).map(parseSandbox);
      },
      async references(scope) {
        return items(await get('SessionReferences', [references, ...scopeFlags(scope)])).map(
          parseSessionReference,
        );
      },
      async sandboxClaims(scope) {
        return items(await get('SandboxClaims', [`sandboxclaims.${GROUP}`, ...scopeFlags(scope)]));
      },
      async warmPools(scope) {
        return items(await get('SandboxWarmPools', [`sandboxwarmpools.${GROUP}`, ...scopeFlags(scope)]));
      },
      async defaultNamespace() {
        const result = await kubectl(['config', 'view', '--minify', '--output', 'jsonpath={..namespace}']);
        return (result.code === 0 ? result.stdout.trim() : '') || 'default';
      },
    },
    events: {
      async events(namespace, kind, name) {
        const list = await get(`the Events of ${kind} ${named(namespace, name)}`, [
          'events',
          `--field-selector=involvedObject.kind=${kind},involvedObject.name=${name}`,
          ...scopeFlags({ namespace }),
        ]);
        return items(list)
          .map(eventSummary)
          .sort((a, b) => seen(a) - seen(b));
      },
    },
  };
}
