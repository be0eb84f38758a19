/**
 * kube-apiserver's own CPU profile over a subject's delete phase (`BENCH_APISERVER_PROFILE=DIR`): Go's pprof
 * endpoint (`--profiling`, on by default) read with the bench's admin credentials, and its top functions by
 * `go tool pprof -top` (a Go profile names its functions itself; no binary needed). It says where the API
 * server's CPU goes for each subject's deletions, not only how much.
 */
import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';

const run = promisify(execFile);

/** Profiles the API server for `seconds` into DIR/<name>.pprof; resolves with the file once written. */
export async function profileApiserver(
  kc: KubeConfig,
  seconds: number,
  dir: string,
  name: string,
): Promise<string> {
  const server = kc.getCurrentCluster()?.server;
  if (server === undefined) throw new Error('bench: the kubeconfig names no cluster');
  const url = new URL(`/debug/pprof/profile?seconds=${seconds}`, server);
  const options: RequestOptions = { method: 'GET', timeout: (seconds + 30) * 1000 };
  await kc.applyToHTTPSOptions(options);
  const file = join(dir, `${name}.pprof`);
  await new Promise<void>((resolve, reject) => {
    const req = request(url, options, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`bench: ${url.pathname} answered ${res.statusCode ?? '?'}`));
        return;
      }
      pipeline(res, createWriteStream(file)).then(resolve, reject);
    });
    req.on('timeout', () => req.destroy(new Error(`bench: ${url.pathname} timed out`)));
    req.on('error', reject);
    req.end();
  });
  return file;
}

/** The profile's top functions by cumulative CPU, as `go tool pprof` prints them. */
export async function topFunctions(file: string, count = 25): Promise<string> {
  try {
    const { stdout } = await run('go', ['tool', 'pprof', '-top', '-cum', `-nodecount=${count}`, file], {
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    return `go tool pprof failed on ${file}: ${error instanceof Error ? error.message : String(error)}`;
  }
}
