/**
 * Failure plan case 6 (docs/sidecar.md "Failure plan coverage"), forced deterministically: a retired session's group id is reused by another session's
 * shell (unshare --pid + ns_last_pid, which needs root). The reaper must prove identity before signalling
 * and send nothing to the stranger.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../../..');
const isRoot = process.getuid?.() === 0;

function runScenario(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(
      'unshare',
      [
        '--pid',
        '--fork',
        '--mount-proc',
        process.execPath,
        '--import',
        'tsx',
        'test/process/sidecar/fixtures/pid-reuse-scenario.ts',
      ],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('a recycled group id', { timeout: 120_000 }, () => {
  it.skipIf(!isRoot)(
    'is never signalled when another session’s shell now owns it (needs root: unshare --pid and ns_last_pid)',
    async () => {
      const run = await runScenario();
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      const result = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as {
        leader: number;
        stranger: number;
        strangerRegistered: string;
        strangerAlive: boolean;
        sent: unknown[];
        targets: { id: string; state: { kind: string; how?: string } }[];
      };
      expect(result.stranger).toBe(result.leader);
      expect(result.strangerRegistered).toBe('Registered');
      expect(result.sent).toEqual([]);
      expect(result.strangerAlive).toBe(true);
      expect(result.targets.map((t) => t.state)).toEqual([
        expect.objectContaining({ kind: 'Done', how: 'Recycled' }),
      ]);
    },
  );
});
