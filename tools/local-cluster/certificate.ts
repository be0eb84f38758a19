/**
 * A self-signed certificate for 127.0.0.1, written as `tls.crt` and `tls.key` into a new directory — the layout
 * the operator's `--metrics-cert-dir` and `--review-cert-dir` read. Self-signed, it is its own CA bundle. Made with
 * openssl (an EC P-256 key): node:crypto makes keys but no certificates.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LocalClusterError } from './errors.ts';

export type LoopbackCertificate = { readonly dir: string; readonly certPem: string };

export async function loopbackCertificate(prefix: string, dir?: string): Promise<LoopbackCertificate> {
  const into = dir ?? (await mkdtemp(join(tmpdir(), `${prefix}-`)));
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    join(into, 'tls.key'),
    '-out',
    join(into, 'tls.crt'),
  ]).catch((error: unknown) => {
    const missing = (error as { code?: unknown }).code === 'ENOENT';
    throw new LocalClusterError(
      missing ? 'tool-missing' : 'process-failed',
      missing ? 'openssl is not on PATH' : 'openssl failed to make a certificate for 127.0.0.1',
      {
        subject: 'openssl',
        outputTail: (error as { stderr?: string }).stderr ?? '',
        ...(missing ? { hint: 'Install it (Debian: apt-get install openssl).' } : {}),
      },
      { cause: error },
    );
  });
  return { dir: into, certPem: await readFile(join(into, 'tls.crt'), 'utf8') };
}
