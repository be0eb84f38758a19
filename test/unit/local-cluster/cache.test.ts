import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { binaryPath, cacheRoot, withLock } from '@sandbox-operator/local-cluster/cache';
import { LocalClusterError } from '@sandbox-operator/local-cluster/errors';
import { TOOLS } from '@sandbox-operator/local-cluster/versions';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lock-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the cache directory', () => {
  it('is $SANDBOX_OPERATOR_CACHE, else $XDG_CACHE_HOME/sandbox-operator, else ~/.cache/sandbox-operator', () => {
    expect(cacheRoot({ SANDBOX_OPERATOR_CACHE: '/c', XDG_CACHE_HOME: '/x', HOME: '/h' })).toBe('/c');
    expect(cacheRoot({ XDG_CACHE_HOME: '/x', HOME: '/h' })).toBe('/x/sandbox-operator');
    expect(cacheRoot({ SANDBOX_OPERATOR_CACHE: '', XDG_CACHE_HOME: '' })).toMatch(
      /\/\.cache\/sandbox-operator$/,
    );
  });

  it('keys binaries by tool and version', () => {
    expect(binaryPath('/c', TOOLS.etcd)).toBe(`/c/bin/etcd-${TOOLS.etcd.version}/etcd`);
  });
});

describe('the build lock', () => {
  it('never lets two holders overlap', async () => {
    const path = join(dir, 'locks', 'g.lock');
    const events: string[] = [];
    const hold = (who: string) =>
      withLock(path, { timeoutMs: 10_000 }, async () => {
        events.push(`${who} in`);
        await delay(200);
        events.push(`${who} out`);
      });
    await Promise.all([hold('a'), hold('b')]);
    expect(['a in,a out,b in,b out', 'b in,b out,a in,a out']).toContain(events.join(','));
  });

  it('breaks a lock left by a process that is gone', async () => {
    const dead = spawnSync('true').pid;
    const path = join(dir, 'g.lock');
    await writeFile(path, JSON.stringify({ pid: dead, startTime: null, host: hostname(), since: 'earlier' }));
    await expect(withLock(path, { timeoutMs: 5_000 }, () => Promise.resolve('built'))).resolves.toBe('built');
  });

  it('breaks an empty lock file once it is old (its writer died before writing)', async () => {
    const path = join(dir, 'g.lock');
    await writeFile(path, '');
    const old = new Date(Date.now() - 60_000);
    await utimes(path, old, old);
    await expect(withLock(path, { timeoutMs: 5_000 }, () => Promise.resolve('built'))).resolves.toBe('built');
  });

  it('waits for a live holder, reports the wait, and times out with a typed error', async () => {
    const path = join(dir, 'g.lock');
    const holder = { pid: process.ppid, startTime: null, host: hostname(), since: 'now' };
    await writeFile(path, JSON.stringify(holder));
    const waits: number[] = [];
    const attempt = withLock(
      path,
      { timeoutMs: 1_500, waitReportMs: 100, onWait: (_holder, waited) => waits.push(waited) },
      () => Promise.resolve('built'),
    );
    const error: unknown = await attempt.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocalClusterError);
    expect((error as LocalClusterError).kind).toBe('lock-timeout');
    expect((error as LocalClusterError).message).toContain(`"pid":${process.ppid}`);
    expect(waits.length).toBeGreaterThan(0);
  });
});
