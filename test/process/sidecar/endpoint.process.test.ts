/**
 * Malformed and hostile requests against the real endpoint: every one is answered 4xx and no signal is
 * sent (the real signaller is wrapped and records every call).
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ownIdentity } from '../../../operator/sidecar/process/sidecar-app.ts';
import { startFixture, type SidecarFixture } from './fixtures/process-fixtures.ts';

interface Raw {
  readonly method?: string;
  readonly path: string;
  readonly body?: string;
  readonly headers?: Record<string, string>;
}

function send(socketPath: string, raw: Raw): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        method: raw.method ?? 'POST',
        path: raw.path,
        headers: { 'content-type': 'application/json', ...raw.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    // A refused oversized body may close the connection mid-write; the answer already arrived.
    req.on('error', reject);
    req.end(raw.body);
  });
}

describe('hostile requests', { timeout: 60_000 }, () => {
  let f: SidecarFixture;
  let socket: string;
  beforeEach(async () => {
    f = await startFixture();
    socket = join(f.dir, 'reaper.sock');
  });
  afterEach(async () => {
    expect(f.sent).toEqual([]);
    await f.dispose();
  });

  const registration = (over: Record<string, unknown>) =>
    JSON.stringify({
      session: 'x',
      turn: 't',
      shell: 'sh',
      pgid: 4242,
      leaderPid: 4242,
      leaderStartTime: 1,
      ...over,
    });

  it.each([
    ['0', 0],
    ['-1', -1],
    ['1', 1],
    ['a string', '4242'],
    ['a float', 42.5],
    ['2^31', 2 ** 31],
    ['a negative', -4242],
  ])('answers a registration with pgid %s with 400', async (_what, pgid) => {
    const answer = await send(socket, { path: '/v1/shells', body: registration({ pgid, leaderPid: pgid }) });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'InvalidRequest' });
  });

  it('answers NaN, broken JSON and unknown fields with 400', async () => {
    for (const body of ['{"pgid": NaN}', '{', registration({ signal: 'SIGKILL' }), '[]', 'null']) {
      expect((await send(socket, { path: '/v1/shells', body })).status).toBe(400);
    }
  });

  it('refuses the sidecar’s own pid and group as a shell (400 ProtectedProcess)', async () => {
    const { ownPid, ownPgid } = await ownIdentity();
    for (const pid of [ownPid, ownPgid]) {
      const answer = await send(socket, {
        path: '/v1/shells',
        body: registration({ pgid: pid, leaderPid: pid }),
      });
      expect([answer.status, JSON.parse(answer.body)]).toEqual([
        400,
        expect.objectContaining({ code: 'ProtectedProcess' }),
      ]);
    }
  });

  it('refuses a real process that is not a marked shell leader (422), reading only /proc', async () => {
    const stranger = process.ppid;
    const answer = await send(socket, {
      path: '/v1/shells',
      body: registration({ pgid: stranger, leaderPid: stranger }),
    });
    expect(answer.status).toBe(422);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'IdentityMismatch' });
  });

  it('answers huge bodies with 413, declared or streamed, and a wrong media type with 415', async () => {
    const huge = 'x'.repeat(1024 * 1024);
    expect((await send(socket, { path: '/v1/turns/end', body: huge })).status).toBe(413);
    const declared = await send(socket, {
      path: '/v1/shells',
      body: '{}',
      headers: { 'content-length': '2' },
    });
    expect(declared.status).toBe(400);
    expect(
      (
        await send(socket, {
          path: '/v1/shells',
          body: registration({}),
          headers: { 'content-type': 'text/plain' },
        })
      ).status,
    ).toBe(415);
  });

  it('takes no group id on a turn end, and refuses wrong methods and unknown paths', async () => {
    const end = { session: 'x', turn: 't', phase: 'Completed', role: 'Subagent' };
    expect(
      (await send(socket, { path: '/v1/turns/end', body: JSON.stringify({ ...end, pgid: 4242 }) })).status,
    ).toBe(400);
    expect(
      (await send(socket, { path: '/v1/turns/end', body: JSON.stringify({ ...end, phase: 'Running' }) }))
        .status,
    ).toBe(400);
    expect((await send(socket, { method: 'GET', path: '/v1/shells' })).status).toBe(405);
    expect((await send(socket, { method: 'DELETE', path: '/v1/turns/end' })).status).toBe(405);
    expect((await send(socket, { path: '/v1/kill', body: '{}' })).status).toBe(404);
    expect((await send(socket, { method: 'GET', path: '/v1/notices?after=-1' })).status).toBe(400);
    expect((await send(socket, { method: 'GET', path: '/v1/notices?waitMs=999999' })).status).toBe(400);
  });

  it('ends a turn of a session with no shells as a no-op success', async () => {
    const answer = await send(socket, {
      path: '/v1/turns/end',
      body: JSON.stringify({ session: f.session('idle'), turn: 't', phase: 'Completed', role: 'Subagent' }),
    });
    expect([answer.status, JSON.parse(answer.body)]).toEqual([
      202,
      { decision: 'Retire', retire: `${f.session('idle')}/t`, groups: 0 },
    ]);
    expect(await f.retired(f.session('idle'), 't')).toEqual([]);
  });
});
