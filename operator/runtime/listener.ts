/**
 * One HTTP(S) listener and its routes: what the probe, metrics and admission review endpoints share. A route
 * answers the paths it owns and returns false for the rest; a path no route owns is answered 404.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';

/** PEM certificate and key: the listener speaks HTTPS. */
export type ServingCertificate = { readonly cert: string; readonly key: string };
/** `tls.crt` and `tls.key` in `dir`, as controller-runtime's CertDir and a kubernetes.io/tls Secret name them. */
export function readServingCertificate(dir: string): ServingCertificate {
  return {
    cert: readFileSync(join(dir, 'tls.crt'), 'utf8'),
    key: readFileSync(join(dir, 'tls.key'), 'utf8'),
  };
}

export type Route = (path: string, req: IncomingMessage, res: ServerResponse) => boolean;

export const answer = (res: ServerResponse, code: number, body: string, type = 'text/plain') => {
  res.writeHead(code, { 'content-type': type });
  res.end(body);
};

export async function listen(
  bind: string,
  routes: readonly Route[],
  what: string,
  log: Logger,
  tls?: ServingCertificate,
): Promise<Server> {
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (!routes.some((route) => route(path, req, res))) answer(res, 404, 'not found');
  };
  const server = tls === undefined ? createServer(handle) : createTlsServer(tls, handle);
  const { host, port } = parseBind(bind);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  log.info({ address: `${address.address}:${address.port}` }, `serving ${what}`);
  return server;
}

/** `:8080`, `0.0.0.0:8080` or `127.0.0.1:0`. */
export function parseBind(bind: string): { host: string; port: number } {
  const at = bind.lastIndexOf(':');
  const host = at <= 0 ? '0.0.0.0' : bind.slice(0, at);
  const port = Number.parseInt(bind.slice(at + 1), 10);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`invalid bind address "${bind}": expected host:port`);
  return { host, port };
}
