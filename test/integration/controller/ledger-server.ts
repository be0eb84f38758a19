/** A scripted session ledger and runtime locator on loopback, speaking docs/legacy-reconciliation.md. */
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type LedgerScript = {
  /** Owners per sandbox name, in ledger order. */
  owners: Record<
    string,
    {
      session: string;
      sessions?: string[];
      worktree?: string;
      allocation?: { sandbox: string; provider: string };
    }[]
  >;
  /** Locator answers per session. */
  locations: Record<
    string,
    | { state: 'located'; sandbox: string; provider: string; worktree?: string }
    | { state: 'not-allocated' }
    | { state: 'history-unavailable'; reason: string }
  >;
};

export class LedgerServer {
  readonly requests: string[] = [];
  private server: Server | undefined;
  constructor(
    private readonly script: LedgerScript,
    private readonly token: string,
  ) {}

  /** As the real ledger answers: every owner with its sessions (the root alone unless scripted). */
  private ownersOf(sandbox: string) {
    return (this.script.owners[sandbox] ?? []).map((owner) => ({
      ...owner,
      sessions: owner.sessions ?? [owner.session],
    }));
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://ledger');
      this.requests.push(url.pathname);
      if (req.headers.authorization !== `Bearer ${this.token}`) {
        res.writeHead(401).end();
        return;
      }
      const owners = /^\/v1\/namespaces\/[^/]+\/sandboxes\/([^/]+)\/owners$/.exec(url.pathname);
      const session = /^\/v1\/sessions\/([^/]+)\/runtime$/.exec(url.pathname);
      const body = owners
        ? { verdict: 'owners', owners: this.ownersOf(decodeURIComponent(owners[1] ?? '')) }
        : session
          ? (this.script.locations[decodeURIComponent(session[1] ?? '')] ?? { state: 'not-allocated' })
          : undefined;
      if (!body) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  /**
   * Starts the ledger and writes its token to a file: the operator flags that walk it. The scripted ledger
   * speaks plain http on loopback, which the documented test-only flag allows.
   */
  async operatorFlags(): Promise<string[]> {
    const url = await this.start();
    const tokenFile = join(tmpdir(), `ledger-token-${process.pid}-${url.replace(/\D/g, '')}`);
    await writeFile(tokenFile, `${this.token}\n`);
    return ['--ledger-url', url, '--ledger-token-file', tokenFile, '--ledger-allow-insecure-http', 'true'];
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
