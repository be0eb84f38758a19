/**
 * The entry points' logger as a process: JSON lines when stdout is a pipe, pino-pretty's human lines when
 * stdout is a terminal (a pseudo-terminal from util-linux `script`), and credentials redacted in both.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REDACTED } from '../../../operator/cli/logger.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');
const fixture = join(import.meta.dirname, 'fixtures', 'log-secrets.ts');
const tsx = join(root, 'node_modules', '.bin', 'tsx');
const SECRETS = ['secret-1', 'secret-2', 'secret-3', 'secret-4', 'secret-5'];
// eslint-disable-next-line no-control-regex -- the terminal's colour sequences are what we strip
const ansi = /\u001b\[[0-9;]*[A-Za-z]/g;

const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const copy: NodeJS.ProcessEnv = { ...process.env };
  delete copy['SANDBOX_OPERATOR_LOG_FORMAT'];
  return { ...copy, ...extra };
};

describe('the entry points’ logger', () => {
  it('writes one JSON line per entry to a pipe, with credentials redacted', async () => {
    const { stdout } = await run(tsx, [fixture], { env: env(), cwd: root });
    const line = JSON.parse(stdout.trim()) as Record<string, unknown>;
    expect(line).toMatchObject({
      msg: 'deletion blocked',
      verdict: 'Foreign',
      kept: 'visible',
      token: REDACTED,
      config: { ledgerToken: REDACTED },
      err: { request: { headers: { authorization: REDACTED } } },
      user: { token: REDACTED, password: REDACTED },
    });
    for (const secret of SECRETS) expect(stdout).not.toContain(secret);
  });

  it('prints human lines on a terminal, the decision on the message line, credentials redacted', async () => {
    const { stdout } = await run('script', ['-qfec', `${tsx} ${fixture}`, '/dev/null'], {
      env: env(),
      cwd: root,
    });
    const text = stdout.replace(ansi, '').replace(/\r/g, '');
    expect(text).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[deletion\] team-a\/shared-login: deletion blocked → Foreign$/m,
    );
    expect(text).toContain('kept: "visible"');
    expect(text).not.toContain('{"level"');
    for (const secret of SECRETS) expect(text).not.toContain(secret);
  });

  it('writes JSON on a terminal when SANDBOX_OPERATOR_LOG_FORMAT=json', async () => {
    const { stdout } = await run('script', ['-qfec', `${tsx} ${fixture}`, '/dev/null'], {
      env: env({ SANDBOX_OPERATOR_LOG_FORMAT: 'json' }),
      cwd: root,
    });
    expect(stdout).toContain('"msg":"deletion blocked"');
  });
});
