/**
 * The ledger channel against hostile or eavesdropped endpoints (issue 15), with real HTTP servers on
 * loopback: plaintext URLs are refused unless the documented insecure flag is set, a ledger that streams an
 * endless body or an oversized array is cut off with an error naming the limit (the walk then fails closed),
 * and the locator receives only its own credential.
 */
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../operator/controller/wiring/config.ts';
import {
  LEDGER_LIMITS,
  httpLedger,
  httpLocator,
  legacyEndpoints,
} from '../../../operator/ledger-walk/adapters/http.ts';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function serve(handler: (req: IncomingMessage, res: import('node:http').ServerResponse) => void) {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const target = { namespace: 'team-a', sandbox: 'legacy', provider: 'kubernetes', worktree: 'wt-1' };
const endpoint = (url: string) => ({ url, token: 'ledger-secret' });

describe('the ledger URL', () => {
  it('must be https unless --ledger-allow-insecure-http is set', async () => {
    const url = await serve((_, res) => res.end());
    expect(() => loadConfig(['--ledger-url', url], {})).toThrow(ConfigError);
    expect(() => loadConfig(['--ledger-url', url], {})).toThrow(/--ledger-url.*https/);
    expect(() => loadConfig(['--ledger-url', 'https://ledger.example', '--locator-url', url], {})).toThrow(
      /--locator-url.*https/,
    );
    const insecure = loadConfig(['--ledger-url', url, '--ledger-allow-insecure-http', 'true'], {});
    expect(insecure.ledgerUrl).toBe(url);
  });
});

describe('a hostile ledger', () => {
  it('streaming an endless body is cut off at the response limit, long before the call deadline', async () => {
    let sent = 0;
    let closed = false;
    const url = await serve((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, ' ');
      res.write('{"verdict":"owners","owners":[');
      const pump = () => {
        while (!closed) {
          sent += chunk.length;
          if (!res.write(chunk)) break;
        }
        if (!closed) res.once('drain', pump);
      };
      res.on('close', () => (closed = true));
      pump();
    });
    const deadline = AbortSignal.timeout(5_000);
    const failure = await httpLedger(endpoint(url))
      .owners(target, deadline)
      .then(
        () => undefined,
        (error: unknown) => error as Error,
      );
    expect(failure?.message).toContain(`${LEDGER_LIMITS.responseBytes} bytes`);
    // Cut off by the limit, not the deadline: the call's own 5 s deadline had not fired when it failed.
    expect(deadline.aborted).toBe(false);
    // What the server managed to push is the limit plus socket buffers, not the 5 s worth of a loopback link.
    expect(sent).toBeLessThan(LEDGER_LIMITS.responseBytes + 16 * 1024 * 1024);
  });

  it('answering more owners than the limit allows is an error naming the field and the limit', async () => {
    const owners = Array.from({ length: LEDGER_LIMITS.owners + 1 }, (_, i) => ({
      session: `s${i}`,
      sessions: [`s${i}`],
    }));
    const url = await serve((_, res) => res.end(JSON.stringify({ verdict: 'owners', owners })));
    await expect(httpLedger(endpoint(url)).owners(target, AbortSignal.timeout(5_000))).rejects.toThrow(
      new RegExp(`owners.*${LEDGER_LIMITS.owners}`),
    );
  });

  it('leaving out an owner’s sessions is an error naming the field, not an owner with its root alone', async () => {
    // The walk locates each session of an owner (issue 25 item 3): a missing list would hide the delegates.
    const url = await serve((_, res) =>
      res.end(JSON.stringify({ verdict: 'owners', owners: [{ session: 's1' }] })),
    );
    await expect(httpLedger(endpoint(url)).owners(target, AbortSignal.timeout(5_000))).rejects.toThrow(
      /owners\.0\.sessions/,
    );
  });

  it('answers every owner with its sessions, worktree and recorded allocation', async () => {
    const owner = {
      session: 'agent_1',
      sessions: ['agent_1', 'workspace_2'],
      worktree: 'wt-2',
      allocation: { sandbox: 'legacy', provider: 'kubernetes' },
    };
    const url = await serve((_, res) =>
      res.end(
        JSON.stringify({ verdict: 'owners', owners: [owner, { session: 'workspace_3', sessions: [] }] }),
      ),
    );
    expect(await httpLedger(endpoint(url)).owners(target, AbortSignal.timeout(5_000))).toEqual({
      kind: 'Owners',
      owners: [owner, { session: 'workspace_3', sessions: [], worktree: undefined, allocation: undefined }],
    });
  });

  it('declaring a content length over the limit is refused before the body is read', async () => {
    const url = await serve((_, res) => {
      res.writeHead(200, { 'content-length': String(LEDGER_LIMITS.responseBytes * 4) });
      res.write('{');
    });
    await expect(httpLedger(endpoint(url)).owners(target, AbortSignal.timeout(5_000))).rejects.toThrow(
      `${LEDGER_LIMITS.responseBytes} bytes`,
    );
  });
});

describe('the locator', () => {
  const tokens = async () => {
    const dir = tmpdir();
    const ledgerFile = join(dir, `ledger-token-${process.pid}`);
    const locatorFile = join(dir, `locator-token-${process.pid}`);
    await writeFile(ledgerFile, 'ledger-secret\n');
    await writeFile(locatorFile, 'locator-secret\n');
    return { ledgerFile, locatorFile };
  };
  const recordingLocator = async (seen: (string | undefined)[]) =>
    serve((req, res) => {
      seen.push(req.headers.authorization);
      res.end(JSON.stringify({ state: 'not-allocated' }));
    });

  it('gets its own token, never the ledger’s', async () => {
    const seen: (string | undefined)[] = [];
    const locatorUrl = await recordingLocator(seen);
    const { ledgerFile, locatorFile } = await tokens();
    const config = loadConfig(
      [
        '--ledger-url',
        'http://127.0.0.1:1/',
        '--locator-url',
        locatorUrl,
        '--ledger-token-file',
        ledgerFile,
        '--locator-token-file',
        locatorFile,
        '--ledger-allow-insecure-http',
        'true',
      ],
      {},
    );
    const { locator } = legacyEndpoints(config) ?? {};
    expect(
      await httpLocator(locator ?? { url: '', token: undefined }).locate('s1', AbortSignal.timeout(5_000)),
    ).toEqual({
      kind: 'NotAllocated',
    });
    expect(seen).toEqual(['Bearer locator-secret']);
  });

  it('at its own URL without its own token file gets no credential at all', async () => {
    const seen: (string | undefined)[] = [];
    const locatorUrl = await recordingLocator(seen);
    const { ledgerFile } = await tokens();
    const config = loadConfig(
      [
        '--ledger-url',
        'http://127.0.0.1:1/',
        '--locator-url',
        locatorUrl,
        '--ledger-token-file',
        ledgerFile,
        '--ledger-allow-insecure-http',
        'true',
      ],
      {},
    );
    const { locator } = legacyEndpoints(config) ?? {};
    await httpLocator(locator ?? { url: '', token: undefined }).locate('s1', AbortSignal.timeout(5_000));
    expect(seen).toEqual([undefined]);
  });
});
