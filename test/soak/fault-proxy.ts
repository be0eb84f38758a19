/**
 * A loopback HTTP proxy in front of kube-apiserver for the operator (and, delays only, for agent hosts): it
 * delays requests, answers some with 409, 429, 500 or 503 instead of forwarding them, and cuts watches
 * (sometimes after a non-410 ERROR event). Faults are decided by a seeded generator and bounded: at most
 * `maxConsecutive` in a row on one path, so every request gets through eventually. Binds 127.0.0.1 only
 * and forwards only to the API server it was given.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';

export type FaultSettings = {
  /** Share of non-watch requests answered with a fault instead of being forwarded. */
  readonly faultRate: number;
  readonly maxConsecutive: number;
  /** Each request waits uniformly up to this long before it is forwarded. */
  readonly maxDelayMs: number;
  /** Share of watches cut after a random 1–20 s. */
  readonly watchDropRate: number;
  /** Share of cut watches that first receive an ERROR event with code 500. */
  readonly watchErrorRate: number;
};

export const NO_FAULTS: FaultSettings = {
  faultRate: 0,
  maxConsecutive: 0,
  maxDelayMs: 0,
  watchDropRate: 0,
  watchErrorRate: 0,
};

export type FaultCounts = Record<'forwarded' | 'faults' | 'watchesCut' | 'watchErrors', number>;

/** A request answered with a fault instead of being forwarded: evidence that a write never happened. */
export type InjectedFault = { readonly at: number; readonly method: string; readonly path: string };

/** mulberry32: small, seeded, good enough to choose faults reproducibly for one request order. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function status(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code });
}

export class FaultProxy {
  private server: Server | undefined;
  private readonly random: () => number;
  private readonly streak = new Map<string, number>();
  private readonly sockets = new Set<ServerResponse>();
  readonly counts: FaultCounts = { forwarded: 0, faults: 0, watchesCut: 0, watchErrors: 0 };
  /** Every injected fault, by namespace (the path's `/namespaces/<name>/`), until taken. */
  private readonly faulted = new Map<string, InjectedFault[]>();

  constructor(
    private readonly target: URL,
    private readonly caPem: string,
    private readonly settings: FaultSettings,
    seed: number,
  ) {
    if (!['127.0.0.1', 'localhost'].includes(target.hostname))
      throw new Error(`the fault proxy forwards only to loopback, not ${target.hostname}`);
    this.random = seededRandom(seed);
  }

  async start(): Promise<string> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const res of this.sockets) res.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The faults injected into requests of `namespace` so far; forgets them. */
  takeFaults(namespace: string): InjectedFault[] {
    const faults = this.faulted.get(namespace) ?? [];
    this.faulted.delete(namespace);
    return faults;
  }

  private record(fault: InjectedFault): void {
    const namespace = /\/namespaces\/([^/]+)\//.exec(fault.path)?.[1];
    if (namespace === undefined) return;
    const list = this.faulted.get(namespace) ?? [];
    list.push(fault);
    this.faulted.set(namespace, list);
  }

  private pickFault(req: IncomingMessage, key: string): { code: number; body: string } | undefined {
    const streak = this.streak.get(key) ?? 0;
    if (this.random() >= this.settings.faultRate || streak >= this.settings.maxConsecutive) {
      this.streak.delete(key);
      return undefined;
    }
    this.streak.set(key, streak + 1);
    const codes = WRITES.has(req.method ?? '') ? [409, 429, 500, 503] : [429, 500, 503];
    const code = codes[Math.floor(this.random() * codes.length)] ?? 500;
    const reasons: Record<number, string> = {
      409: 'Conflict',
      429: 'TooManyRequests',
      500: 'InternalError',
      503: 'ServiceUnavailable',
    };
    return {
      code,
      body: status(code, reasons[code] ?? 'InternalError', `soak fault proxy: injected ${code}`),
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.target);
    const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    const key = `${req.method ?? ''} ${url.pathname}`;
    if (!watch) {
      const fault = this.pickFault(req, key);
      if (fault) {
        this.counts.faults++;
        this.record({ at: Date.now(), method: req.method ?? '', path: url.pathname });
        req.resume();
        res.writeHead(fault.code, {
          'content-type': 'application/json',
          ...(fault.code === 429 ? { 'retry-after': '1' } : {}),
        });
        res.end(fault.body);
        return;
      }
      const delay = Math.floor(this.random() * this.settings.maxDelayMs);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    }
    this.counts.forwarded++;
    const cut = watch && this.random() < this.settings.watchDropRate;
    const cutAfterMs = 1_000 + Math.floor(this.random() * 19_000);
    const withError = cut && this.random() < this.settings.watchErrorRate;
    this.forward(req, res, url, cut ? { afterMs: cutAfterMs, withError } : undefined);
  }

  private forward(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    cut: { afterMs: number; withError: boolean } | undefined,
  ): void {
    const headers = { ...req.headers, host: this.target.host };
    const upstream = httpsRequest(
      {
        hostname: this.target.hostname,
        port: this.target.port,
        path: url.pathname + url.search,
        method: req.method,
        headers,
        ca: this.caPem,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        let atLineEnd = true;
        answer.on('data', (chunk: Buffer) => (atLineEnd = chunk.at(-1) === 0x0a));
        answer.pipe(res);
        if (cut && (answer.statusCode ?? 0) === 200) {
          this.sockets.add(res);
          const timer = setTimeout(() => {
            this.counts.watchesCut++;
            answer.unpipe(res);
            answer.destroy();
            if (cut.withError && atLineEnd) {
              this.counts.watchErrors++;
              res.end(
                `${JSON.stringify({ type: 'ERROR', object: JSON.parse(status(500, 'InternalError', 'soak fault proxy: watch failed')) as unknown })}\n`,
              );
            } else res.destroy();
          }, cut.afterMs);
          res.on('close', () => {
            clearTimeout(timer);
            this.sockets.delete(res);
          });
        }
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }
}
