/**
 * The watcher's recovery, against a scripted API server on loopback (the real one cannot be made to expire a
 * watch on demand): 410 Gone relists and reports objects deleted meanwhile; any other failure backs off and
 * relists; a clean close re-watches from the last resourceVersion without a relist.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Watcher, type WatchEventType } from '../../../operator/runtime/watcher.ts';
import { eventually, pending } from '../../harness/eventually.ts';

const pod = (name: string, rv: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
});

type Step = (res: ServerResponse, query: URLSearchParams) => void;
const lists: { rv: string; items: ReturnType<typeof pod>[] }[] = [];
const watches: Step[] = [];
const seen: string[] = [];
/** Held-open watches the client closed (the server never ends them itself). */
const closedByClient: string[] = [];
let server: Server;
let url: string;
/** LISTs still to refuse with an RBAC 403, as the API server words it. */
let refusals = 0;
/**
 * The running test's bearer token. The server is in this process: a request an earlier test's watcher had on
 * the wire when it stopped can reach the handler after the next test began. Such a request is answered apart
 * (503), never from the running test's script or into what it saw.
 */
let current = '';
let tests = 0;

/** A test's start: a fresh script, nothing seen, and a token only its own watchers send. */
function begin(): void {
  current = `test-${++tests}`;
  seen.length = 0;
  lists.length = 0;
  watches.length = 0;
  refusals = 0;
}
const RBAC_REFUSAL = {
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  message:
    'pods is forbidden: User "system:serviceaccount:sandbox-system:sandbox-operator" cannot list resource "pods" in API group "" at the cluster scope',
  reason: 'Forbidden',
  code: 403,
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const request = new URL(req.url ?? '/', 'http://x');
    const json = (body: unknown, code = 200) =>
      res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (request.pathname === '/api/v1') {
      json({
        kind: 'APIResourceList',
        groupVersion: 'v1',
        resources: [{ name: 'pods', namespaced: true, kind: 'Pod', verbs: ['list', 'watch'] }],
      });
    } else if (request.pathname === '/api/v1/pods' && req.headers.authorization !== `Bearer ${current}`) {
      json({ message: 'a stopped watcher’s request' }, 503);
    } else if (request.pathname === '/api/v1/pods' && request.searchParams.get('watch') === 'true') {
      seen.push(`watch@${request.searchParams.get('resourceVersion') ?? ''}`);
      const step = watches.shift();
      if (step) step(res, request.searchParams);
      else {
        // Hold open until the client stops: only the client can end this watch.
        const name = `watch@${request.searchParams.get('resourceVersion') ?? ''}`;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.on('close', () => closedByClient.push(name));
      }
    } else if (request.pathname === '/api/v1/pods' && refusals > 0) {
      refusals -= 1;
      seen.push('list refused');
      json(RBAC_REFUSAL, 403);
    } else if (request.pathname === '/api/v1/pods') {
      const list = lists.shift() ?? { rv: '99', items: [] };
      seen.push(`list@${list.rv}`);
      json({ apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: list.rv }, items: list.items });
    } else json({ message: 'not found' }, 404);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

type LogLine = { level: number; msg: string; fix?: string };

function watcher(events: string[], lines?: LogLine[]) {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token: current }],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  const sink = {
    replace: (items: readonly unknown[]) =>
      events.push(
        `replace:${items.map((i) => (i as { metadata: { name: string } }).metadata.name).join(',')}`,
      ),
    apply: (type: WatchEventType, object: unknown) =>
      events.push(`${type}:${(object as { metadata: { name: string } }).metadata.name}`),
  };
  const restarts: string[] = [];
  const resource = { name: 'pods', apiVersion: 'v1', kind: 'Pod', path: '/api/v1/pods' };
  return {
    restarts,
    watcher: new Watcher(kc, resource, sink, logTo(lines), {
      onRestart: (_name, reason) => restarts.push(reason),
    }),
  };
}

const logTo = (lines: LogLine[] | undefined) =>
  lines === undefined
    ? pino({ level: 'silent' })
    : pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as LogLine) });

/** Waits for the scripted server or the sink to have seen `check`; says what the server saw if not. */
const until = (what: string, check: () => boolean) =>
  eventually(what, () => Promise.resolve(check() ? true : pending({ seen: [...seen] })), 15_000);

describe('the watcher', () => {
  it('relists on 410 Gone, reporting objects deleted while the watch was gone', async () => {
    begin();
    lists.push({ rv: '10', items: [pod('a', '5'), pod('b', '6')] }, { rv: '20', items: [pod('b', '6')] });
    watches.push(
      (res) =>
        res
          .writeHead(200)
          .end(
            `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } })}\n`,
          ),
      (res) => res.writeHead(200).write(`${JSON.stringify({ type: 'ADDED', object: pod('c', '21') })}\n`),
    );
    const events: string[] = [];
    const { watcher: w, restarts } = watcher(events);
    const stop = new AbortController();
    const running = w.run(stop.signal);
    await until('the ADDED after the relist', () => events.includes('ADDED:c'));
    stop.abort();
    await running;
    expect(events).toEqual(['replace:a,b', 'replace:b', 'ADDED:c']);
    expect(seen).toEqual(['list@10', 'watch@10', 'list@20', 'watch@20']);
    expect(restarts).toEqual(['gone']);
  });

  it('re-watches from the last resourceVersion after a clean close, without a relist', async () => {
    begin();
    lists.push({ rv: '30', items: [] });
    watches.push((res) =>
      res
        .writeHead(200)
        .end(
          `${JSON.stringify({ type: 'ADDED', object: pod('d', '31') })}\n${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '35' } } })}\n`,
        ),
    );
    const events: string[] = [];
    const { watcher: w } = watcher(events);
    const stop = new AbortController();
    const running = w.run(stop.signal);
    await until('the second watch', () => seen.includes('watch@35'));
    stop.abort();
    await running;
    expect(seen).toEqual(['list@30', 'watch@30', 'watch@35']);
    expect(events).toEqual(['replace:', 'ADDED:d']);
  });

  it('backs off and relists after a failed watch', async () => {
    begin();
    lists.push({ rv: '40', items: [] }, { rv: '41', items: [pod('e', '41')] });
    watches.push((res) => res.writeHead(500).end('{"message":"etcdserver: leader changed"}'));
    const events: string[] = [];
    const { watcher: w, restarts } = watcher(events);
    const stop = new AbortController();
    const running = w.run(stop.signal);
    await until('the relist', () => events.includes('replace:e'));
    stop.abort();
    await running;
    expect(restarts).toEqual(['error']);
    expect(seen.slice(0, 3)).toEqual(['list@40', 'watch@40', 'list@41']);
  });

  it('takes an ERROR event other than 410 as a failure: backs off, relists, and is not synced meanwhile', async () => {
    begin();
    // What an API server sends after an etcd restore: the watch's resourceVersion means nothing any more.
    lists.push({ rv: '60', items: [pod('f', '60')] }, { rv: '7', items: [pod('g', '7')] });
    watches.push((res) =>
      res
        .writeHead(200)
        .end(
          `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 504, reason: 'Timeout', message: 'Too large resource version' } })}\n`,
        ),
    );
    const events: string[] = [];
    const { watcher: w, restarts } = watcher(events);
    const stop = new AbortController();
    const running = w.run(stop.signal);
    await w.hasSynced();
    await until('the failed watch', () => restarts.length > 0);
    const syncedAfterError = w.isSynced;
    await until('the relist', () => events.includes('replace:g'));
    const syncedAfterRelist = w.isSynced;
    stop.abort();
    await running;
    expect(restarts).toEqual(['error']);
    expect(seen.slice(0, 3)).toEqual(['list@60', 'watch@60', 'list@7']);
    expect(syncedAfterError).toBe(false);
    expect(syncedAfterRelist).toBe(true);
  });

  it('says a refused LIST (a missing permission) once, with its fix, and once more when it is allowed again', async () => {
    begin();
    refusals = 3;
    lists.push({ rv: '70', items: [pod('h', '70')] });
    const events: string[] = [];
    const lines: LogLine[] = [];
    const { watcher: w } = watcher(events, lines);
    const stop = new AbortController();
    const running = w.run(stop.signal);
    await until('the list after the refusals', () => events.includes('replace:h'));
    stop.abort();
    await running;
    expect(seen.filter((s) => s === 'list refused')).toHaveLength(3);
    const said = lines.filter((l) => l.level >= 40);
    expect(said.map((l) => [l.level, l.msg])).toEqual([
      [
        50,
        'list/watch of pods refused by a setting only a person can change; the cache is not synced until it is',
      ],
    ]);
    expect(said[0]?.fix).toContain(
      'kubectl auth can-i list pods --as system:serviceaccount:sandbox-system:sandbox-operator',
    );
    expect(
      lines.filter((l) => l.level === 20 && l.msg.startsWith('list/watch of pods still refused')),
    ).toHaveLength(2);
    expect(lines.filter((l) => l.level === 30 && l.msg === 'list/watch of pods allowed again')).toHaveLength(
      1,
    );
  });

  it('says once, with the fix, that no CRD serves a resource it cannot list (404), and is not synced', async () => {
    const lines: LogLine[] = [];
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const resource = {
      name: 'sandboxwarmpools',
      apiVersion: 'sandbox.agents.dev/v1alpha1',
      kind: 'SandboxWarmPool',
      path: '/apis/sandbox.agents.dev/v1alpha1/sandboxwarmpools',
    };
    const sink = { replace: () => undefined, apply: () => undefined };
    const w = new Watcher(kc, resource, sink, logTo(lines));
    const stop = new AbortController();
    const running = w.run(stop.signal);
    await eventually('a second refused list', () =>
      Promise.resolve(
        lines.filter((l) => l.msg.startsWith('list/watch of sandboxwarmpools still refused')).length > 0
          ? true
          : pending({ lines: lines.map((l) => l.msg) }),
      ),
    );
    stop.abort();
    await running;
    expect(w.isSynced).toBe(false);
    const said = lines.filter((l) => l.level >= 40);
    expect(said.map((l) => l.level)).toEqual([50]);
    expect(said[0]?.fix).toContain('install its CustomResourceDefinition');
  });

  it('stops when asked, even while a watch is open: it closes the watch itself', async () => {
    begin();
    closedByClient.length = 0;
    lists.push({ rv: '50', items: [] });
    const { watcher: w, restarts } = watcher([]);
    const stop = new AbortController();
    const running = w.run(stop.signal);
    await w.hasSynced();
    await until('the watch to be open', () => seen.includes('watch@50'));
    stop.abort();
    // The server holds the watch for ever, so `running` settles only because the abort closed it.
    await running;
    await until('the server to see the watch closed', () => closedByClient.includes('watch@50'));
    expect(seen).toEqual(['list@50', 'watch@50']);
    expect(restarts).toEqual([]);
  });
});
