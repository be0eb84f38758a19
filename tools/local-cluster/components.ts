// etcd and kube-apiserver: flags (as controller-runtime's envtest starts them), start-up on
// free loopback ports, and readiness. A port taken between choosing and binding is retried.
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Credentials } from './auth.ts';
import { LocalClusterError } from './errors.ts';
import { freePort, get, poll } from './net.ts';
import { startProcess, type ManagedProcess } from './processes.ts';

export interface ComponentContext {
  readonly tempDir: string;
  readonly stateDir: string;
  readonly logger: Logger;
}

const PORT_ATTEMPTS = 3;

function exitedReason(proc: ManagedProcess): () => string | null {
  return () => (proc.running() ? null : `${proc.name} exited`);
}

async function failure(proc: ManagedProcess, phase: string, reason: string): Promise<LocalClusterError> {
  await proc.stop(2_000);
  return new LocalClusterError('not-ready', `${proc.name}: ${phase}: ${reason} (log: ${proc.logPath})`, {
    subject: proc.name,
    step: phase,
    outputTail: await proc.logTail(25),
  });
}

function portClash(error: LocalClusterError): boolean {
  return /address already in use/i.test(error.details.outputTail ?? '');
}

async function withPortRetry<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (error: unknown) {
      if (!(error instanceof LocalClusterError) || !portClash(error) || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

export interface Etcd {
  readonly process: ManagedProcess;
  readonly clientUrl: string;
}

export function startEtcd(ctx: ComponentContext, binary: string): Promise<Etcd> {
  return withPortRetry(async () => {
    const [clientPort, peerPort] = [await freePort(), await freePort()];
    const clientUrl = `http://127.0.0.1:${clientPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const proc = startProcess({
      name: 'etcd',
      command: binary,
      args: [
        '--name=local',
        `--data-dir=${join(ctx.tempDir, 'etcd')}`,
        `--listen-client-urls=${clientUrl}`,
        `--advertise-client-urls=${clientUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=local=${peerUrl}`,
        // Test data need not survive a power cut; fsync dominates etcd's latency on slow disks.
        '--unsafe-no-fsync=true',
      ],
      logPath: join(ctx.tempDir, 'etcd.log'),
      stateDir: ctx.stateDir,
    });
    const ready = await poll(
      async () => ((await get(`${clientUrl}/health`)).status === 200 ? true : undefined),
      { timeoutMs: 30_000, abortIf: exitedReason(proc) },
    );
    if (!ready.ok) throw await failure(proc, 'wait for /health', ready.reason);
    return { process: proc, clientUrl };
  });
}

export interface ApiServerArgs {
  readonly binary: string;
  readonly etcdUrl: string;
  readonly credentials: Credentials;
  /** Reused by restarts, so clients keep the same address and CA. */
  readonly port?: number;
  /** Opt-in audit log (what the API server recorded is the witness of the soak's invariants). */
  readonly audit?: ApiServerAudit | undefined;
  /** /debug/pprof, for benchmarks; off otherwise (nothing else needs it). */
  readonly profiling?: boolean;
}

export interface ApiServerAudit {
  /** An audit.k8s.io/v1 Policy file. */
  readonly policyFile: string;
  /** Where the JSON-lines log is appended; never rotated. */
  readonly logPath: string;
}

/** Audit flags: JSON lines, written as each request completes, no rotation, no truncation. */
export function auditFlags(audit: ApiServerAudit | undefined): string[] {
  if (audit === undefined) return [];
  return [
    `--audit-policy-file=${audit.policyFile}`,
    `--audit-log-path=${audit.logPath}`,
    '--audit-log-format=json',
    '--audit-log-mode=blocking',
    '--audit-log-maxsize=0',
  ];
}

export interface ApiServer {
  readonly process: ManagedProcess;
  readonly port: number;
  readonly server: string;
  /** The CA that signed the self-generated serving certificate. */
  readonly caPem: string;
}

export function startApiServer(ctx: ComponentContext, spec: ApiServerArgs): Promise<ApiServer> {
  return withPortRetry(async () => {
    const port = spec.port ?? (await freePort());
    const server = `https://127.0.0.1:${port}`;
    const certDir = join(ctx.tempDir, 'apiserver-certs');
    await mkdir(certDir, { recursive: true });
    const proc = startProcess({
      name: 'kube-apiserver',
      command: spec.binary,
      args: [
        `--etcd-servers=${spec.etcdUrl}`,
        // No --tls-cert-file: the apiserver writes a CA and a serving certificate for 127.0.0.1 here.
        `--cert-dir=${certDir}`,
        `--secure-port=${port}`,
        '--bind-address=127.0.0.1',
        // Without it a loopback bind address makes the apiserver look for a default-route interface.
        '--advertise-address=127.0.0.1',
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        '--authorization-mode=RBAC',
        // Pods need no default ServiceAccount (no token controller runs); ValidatingAdmissionPolicy stays on.
        // No node-lifecycle controller runs to lift the not-ready taint TaintNodesByCondition puts on a new
        // node, so the real node would never take a pod; kwok nodes carry their own taint (addons.ts).
        '--disable-admission-plugins=ServiceAccount,TaintNodesByCondition',
        `--token-auth-file=${spec.credentials.tokenAuthFile}`,
        `--service-account-issuer=${server}`,
        `--service-account-key-file=${spec.credentials.serviceAccountPublicKeyFile}`,
        `--service-account-signing-key-file=${spec.credentials.serviceAccountPrivateKeyFile}`,
        `--profiling=${spec.profiling === true}`,
        // Open watches (kcm, kwok, informers) would otherwise hold a SIGTERM'd apiserver until killed.
        '--shutdown-watch-termination-grace-period=2s',
        ...auditFlags(spec.audit),
      ],
      logPath: join(ctx.tempDir, 'kube-apiserver.log'),
      stateDir: ctx.stateDir,
    });
    const ca = await poll(
      async () => certificateAuthority((await readIfPresent(join(certDir, 'apiserver.crt'))) ?? ''),
      {
        timeoutMs: 30_000,
        abortIf: exitedReason(proc),
      },
    );
    if (!ca.ok) throw await failure(proc, 'wait for the serving certificate and its CA', ca.reason);
    const caPem = ca.value;
    const token = spec.credentials.adminToken;
    const ready = await poll(
      async () => ((await get(`${server}/readyz`, { ca: caPem, token })).status === 200 ? true : undefined),
      { timeoutMs: 60_000, abortIf: exitedReason(proc) },
    );
    if (!ready.ok) throw await failure(proc, 'wait for /readyz', ready.reason);
    // The default namespace is created by a post-start hook shortly after /readyz.
    const namespace = await poll(
      async () =>
        (await get(`${server}/api/v1/namespaces/default`, { ca: caPem, token })).status === 200
          ? true
          : undefined,
      { timeoutMs: 30_000, abortIf: exitedReason(proc) },
    );
    if (!namespace.ok) throw await failure(proc, 'wait for namespace default', namespace.reason);
    await writeFile(join(ctx.tempDir, 'ca.crt'), caPem);
    return { process: proc, port, server, caPem };
  });
}

async function readIfPresent(path: string): Promise<string | undefined> {
  try {
    const text = await readFile(path, 'utf8');
    return text;
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * apiserver.crt holds the serving certificate followed by the CA that signed it; trust only the CA.
 * Undefined while the file is missing or still being written.
 */
export function certificateAuthority(bundle: string): string | undefined {
  const blocks = bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const authorities = blocks.filter((pem) => new X509Certificate(pem).ca);
  return authorities.length === 0 ? undefined : `${authorities.join('\n')}\n`;
}
