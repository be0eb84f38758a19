// Starts etcd → kube-apiserver → (CRDs) → kube-controller-manager and kwok on loopback, with
// temporary data and certificate directories, and stops them in reverse order.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import { kwokNodeName, startControllerManager, startKwok } from './addons.ts';
import { RESTRICTED_USER, ADMIN_USER, writeCredentials } from './auth.ts';
import { ensureBinaries, type BinaryPaths } from './build.ts';
import { cacheRoot, runStateDir } from './cache.ts';
import {
  startApiServer,
  startEtcd,
  type ApiServer,
  type ApiServerAudit,
  type ComponentContext,
} from './components.ts';
import { allowSandboxPodsOnHostNetwork, allowTemplateNodes, installCrds, type CrdSummary } from './crds.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { runKubectl, type KubectlOptions, type KubectlResult } from './kubectl.ts';
import { registry } from './process-registry.ts';
import type { ManagedProcess } from './processes.ts';
import { reapOrphans } from './reaper.ts';
import { formatBuildEvent, type BuildReporter } from './run-step.ts';
import { LocalClusterError } from './errors.ts';
import { CONTROL_PLANE_TOOLS, REAL_NODE_TOOLS } from './versions.ts';
import { realNodeRequired, realNodeVerdict, startRealNode, type RealNode } from './node/index.ts';

export const DEFAULT_CRD_DIR = fileURLToPath(new URL('../../crds/', import.meta.url));

export interface LocalClusterOptions {
  /** Garbage collector and namespace controller; default true. */
  readonly controllerManager?: boolean;
  /** Fake Nodes and pod lifecycle; default true with 3 nodes (kwok-node-0..2). */
  readonly kwok?: boolean | { readonly nodes: number };
  /** CRDs to install (and `policies/` under it); default the repository's crds/; null for none. */
  readonly crdDir?: string | null;
  readonly cacheDir?: string;
  readonly logger?: Logger;
  readonly report?: BuildReporter;
  /** Keep the temporary directory (logs, etcd data) after stop; default $SANDBOX_OPERATOR_KEEP_TMP=1. */
  readonly keepTempDir?: boolean;
  /** An audit.k8s.io/v1 Policy (YAML): turns on the API server's audit log, at `auditLogPath`. */
  readonly auditPolicy?: string;
  /** The API server's /debug/pprof endpoints (benchmarks); default off. */
  readonly profiling?: boolean;
  /**
   * A real node (kubelet + containerd) beside the kwok nodes, where the machine can run one; default
   * off. `taint: true` keeps pods that do not tolerate REAL_NODE_TAINT off it.
   */
  readonly realNode?: false | { readonly taint: boolean };
}

export type ControlPlaneTool = (typeof CONTROL_PLANE_TOOLS)[number];

export interface LocalCluster {
  readonly server: string;
  /** Admin (system:masters) kubeconfig. */
  readonly kubeconfigPath: string;
  /** Kubeconfig of `sandbox-operator`, a user with no RBAC grants of its own. */
  readonly restrictedKubeconfigPath: string;
  readonly caPath: string;
  readonly tempDir: string;
  /** The API server's audit log (JSON lines), when `auditPolicy` was given; else null. */
  readonly auditLogPath: string | null;
  readonly binaries: BinaryPaths<ControlPlaneTool>;
  readonly crds: readonly CrdSummary[];
  /** The real node, or null with the reason in `realNodeSkipReason` (null when it was not asked for). */
  readonly realNode: RealNode | null;
  readonly realNodeSkipReason: string | null;
  /** Wall time of startLocalCluster, binaries already built. */
  readonly startupMs: number;
  /** Runs the built kubectl as admin. */
  kubectl(args: readonly string[], options?: KubectlOptions): Promise<KubectlResult>;
  /** Pids (= process group ids) of the running components. */
  pids(): Readonly<Record<string, number>>;
  /** Stops and restarts kube-apiserver on the same port with the same certificates. */
  restartApiServer(): Promise<void>;
  stop(): Promise<void>;
}

export async function startLocalCluster(options: LocalClusterOptions = {}): Promise<LocalCluster> {
  const started = Date.now();
  const logger = options.logger ?? pino({ name: 'local-cluster' }, pino.destination(2));
  const root = options.cacheDir ?? cacheRoot();
  const stateDir = runStateDir(root);
  // Info, not warn: the leftovers are already gone, so nothing is left for a person to do (issue 30, logs).
  for (const run of await reapOrphans(stateDir))
    logger.info({ ...run }, 'reaped processes and directories of a run that ended without cleaning up');

  const binaries = await ensureBinaries({
    tools: CONTROL_PLANE_TOOLS,
    cacheDir: root,
    ...(options.report === undefined ? {} : { report: options.report }),
  });
  const tempDir = await mkdtemp(join(tmpdir(), 'sandbox-operator-'));
  registry.trackTempDir(tempDir, stateDir);
  const keepTempDir = options.keepTempDir ?? process.env['SANDBOX_OPERATOR_KEEP_TMP'] === '1';
  const ctx: ComponentContext = { tempDir, stateDir, logger };
  const running: ManagedProcess[] = [];
  const nodes: RealNode[] = [];

  const cleanUp = async (): Promise<void> => {
    for (const node of nodes.splice(0)) await node.stop();
    // Reverse start order: clients of the apiserver first, etcd last.
    for (const proc of [...running].reverse())
      await proc.stop(proc.name === 'kube-apiserver' ? 15_000 : 5_000);
    running.length = 0;
    if (!keepTempDir) await rm(tempDir, { recursive: true, force: true, maxRetries: 3 });
    registry.forgetTempDir(tempDir);
  };

  try {
    const phase = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
      const t0 = Date.now();
      const value = await run();
      logger.info({ phase: name, ms: Date.now() - t0 }, `${name} ready`);
      return value;
    };
    const credentials = await writeCredentials(tempDir);
    const audit = await writeAuditPolicy(tempDir, options.auditPolicy);
    const etcd = await phase('etcd', () => startEtcd(ctx, binaries.etcd));
    running.push(etcd.process);
    let api: ApiServer = await phase('kube-apiserver', () =>
      startApiServer(ctx, {
        binary: binaries['kube-apiserver'],
        etcdUrl: etcd.clientUrl,
        credentials,
        audit,
        profiling: options.profiling ?? false,
      }),
    );
    running.push(api.process);

    const kubeconfigPath = join(tempDir, 'admin.kubeconfig');
    const restrictedKubeconfigPath = join(tempDir, 'restricted.kubeconfig');
    const base = { server: api.server, caPem: api.caPem, contextName: 'sandbox-operator-local' };
    await writeKubeconfig(kubeconfigPath, { ...base, user: ADMIN_USER, token: credentials.adminToken });
    await writeKubeconfig(restrictedKubeconfigPath, {
      ...base,
      user: RESTRICTED_USER,
      token: credentials.restrictedToken,
    });
    const kubectl = (args: readonly string[], opts?: KubectlOptions): Promise<KubectlResult> =>
      runKubectl(binaries.kubectl, kubeconfigPath, args, opts);

    const crdDir = options.crdDir === undefined ? DEFAULT_CRD_DIR : options.crdDir;
    const installed =
      crdDir === null
        ? { crds: [], files: [] }
        : await phase('crds', () =>
            installCrds({
              dir: crdDir,
              kubectl,
              server: api.server,
              caPem: api.caPem,
              token: credentials.adminToken,
            }),
          );

    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    const kwokNodes =
      options.kwok === false
        ? 0
        : options.kwok === true || options.kwok === undefined
          ? 3
          : options.kwok.nodes;
    const addons = await Promise.all([
      options.controllerManager === false
        ? null
        : phase('kube-controller-manager', () =>
            startControllerManager(ctx, binaries['kube-controller-manager'], kubeconfigPath, kc, {
              // Pods on a real node mount kube-root-ca.crt (the shell reaper's projected token volume).
              rootCaFile: options.realNode ? join(tempDir, 'ca.crt') : null,
            }),
          ),
      options.kwok === false
        ? null
        : phase('kwok', () => startKwok(ctx, binaries.kwok, kubeconfigPath, kc, { nodes: kwokNodes })),
    ]);
    for (const proc of addons) if (proc !== null) running.push(proc);
    const kwokNames = Array.from({ length: kwokNodes }, (_, i) => kwokNodeName(i));
    await phase('template nodes', () => allowTemplateNodes({ kubectl }, installed, kwokNames));
    const nodeEnv = { root, kubeconfigPath, kc, report: options.report, apiPort: api.port, kubectl };
    const node =
      options.realNode === undefined || options.realNode === false
        ? { node: null, skipReason: null }
        : await phase('real node', () => maybeRealNode(options, ctx, nodeEnv));
    if (node.node !== null) nodes.push(node.node);
    if (node.node !== null)
      await phase('host-network sandbox pods', () => allowSandboxPodsOnHostNetwork({ kubectl }, installed));

    let stopping: Promise<void> | null = null;
    const startupMs = Date.now() - started;
    logger.info(
      { server: api.server, kubeconfig: kubeconfigPath, crds: installed.crds.map((c) => c.name), startupMs },
      'local control plane ready',
    );
    return {
      server: api.server,
      kubeconfigPath,
      restrictedKubeconfigPath,
      caPath: join(tempDir, 'ca.crt'),
      tempDir,
      auditLogPath: audit?.logPath ?? null,
      binaries,
      crds: installed.crds,
      realNode: node.node,
      realNodeSkipReason: node.skipReason,
      startupMs,
      kubectl,
      pids: () =>
        Object.fromEntries(
          [...running, ...nodes.flatMap((n) => n.processes)]
            .filter((p) => p.running())
            .map((p) => [p.name, p.pid]),
        ),
      async restartApiServer() {
        const index = running.indexOf(api.process);
        await api.process.stop(15_000);
        api = await phase('kube-apiserver (restart)', () =>
          startApiServer(ctx, {
            binary: binaries['kube-apiserver'],
            etcdUrl: etcd.clientUrl,
            credentials,
            port: api.port,
            audit,
            profiling: options.profiling ?? false,
          }),
        );
        running[index] = api.process;
      },
      stop() {
        stopping ??= cleanUp().then(() => {
          logger.info({ tempDir: keepTempDir ? tempDir : undefined }, 'local control plane stopped');
        });
        return stopping;
      },
    };
  } catch (error: unknown) {
    await cleanUp();
    throw error;
  }
}

async function writeAuditPolicy(
  tempDir: string,
  policy: string | undefined,
): Promise<ApiServerAudit | undefined> {
  if (policy === undefined) return undefined;
  const policyFile = join(tempDir, 'audit-policy.yaml');
  await writeFile(policyFile, policy);
  return { policyFile, logPath: join(tempDir, 'audit.log') };
}

async function maybeRealNode(
  options: LocalClusterOptions,
  ctx: ComponentContext,
  env: {
    root: string;
    kubeconfigPath: string;
    kc: KubeConfig;
    report: BuildReporter | undefined;
    apiPort: number;
    kubectl: (args: readonly string[], options?: KubectlOptions) => Promise<KubectlResult>;
  },
): Promise<{ node: RealNode | null; skipReason: string | null }> {
  if (options.realNode === undefined || options.realNode === false) return { node: null, skipReason: null };
  const verdict = realNodeVerdict();
  if (!verdict.ok) {
    if (realNodeRequired())
      throw new LocalClusterError(
        'not-ready',
        `real node required (SANDBOX_OPERATOR_REAL_NODE=1): ${verdict.reason}`,
      );
    ctx.logger.warn({ reason: verdict.reason }, `no real node: ${verdict.reason}; running on kwok alone`);
    return { node: null, skipReason: verdict.reason };
  }
  const report = env.report ?? defaultReport;
  const binaries = await ensureBinaries({ tools: REAL_NODE_TOOLS, cacheDir: env.root, report });
  const node = await startRealNode(ctx, {
    kubeletBinary: binaries.kubelet,
    schedulerBinary: binaries['kube-scheduler'],
    kubeconfigPath: env.kubeconfigPath,
    kc: env.kc,
    cacheRoot: env.root,
    report,
    taint: options.realNode.taint,
    apiPort: env.apiPort,
    kubectl: env.kubectl,
  });
  return { node, skipReason: null };
}

const defaultReport: BuildReporter = (event) => {
  process.stderr.write(`${formatBuildEvent(event)}\n`);
};
