/**
 * kubernetes-sigs/agent-sandbox, the Go peer of issue 13's benchmark: its controller built from its Go module
 * at a pinned version into the tool cache (a bench dependency, never a runtime one), and its Sandbox CRD
 * taken from the same module. Built once, like the control-plane tools; a build that cannot be had is a
 * value the bench prints, not an exception.
 */
import { access, chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { cacheRoot, formatBuildEvent } from '@sandbox-operator/local-cluster';
import { runStep } from '@sandbox-operator/local-cluster/run-step';

export const PEER_MODULE = 'sigs.k8s.io/agent-sandbox';
export const PEER_VERSION = 'v0.5.6';
const PEER_PACKAGE = `${PEER_MODULE}/cmd/agent-sandbox-controller`;
/** The extension kinds' plurals, as the module's k8s/crds/ names their files. */
const EXTENSION_PLURALS = ['sandboxtemplates', 'sandboxwarmpools', 'sandboxclaims'] as const;

export type PeerBuild =
  | {
      readonly ok: true;
      readonly binary: string;
      readonly crd: Record<string, unknown>;
      /** SandboxTemplate, SandboxWarmPool and SandboxClaim (served by `--extensions`), conversion None too. */
      readonly extensionCrds: readonly Record<string, unknown>[];
    }
  | { readonly ok: false; readonly reason: string };

const goEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  CGO_ENABLED: '0',
  GOWORK: 'off',
  GO111MODULE: 'on',
});
const report = (event: Parameters<typeof formatBuildEvent>[0]) =>
  process.stderr.write(`${formatBuildEvent(event)}\n`);

/** The controller binary and its Sandbox CRD, building the binary into the cache when it is missing. */
export async function ensurePeer(root = cacheRoot()): Promise<PeerBuild> {
  const binary = join(root, 'bin', `agent-sandbox-controller-${PEER_VERSION}`, 'agent-sandbox-controller');
  const dir = join(root, 'src', `agent-sandbox-${PEER_VERSION}`);
  const retryHint = `Retry with \`npm run bench -- peer\`; the throwaway module is ${dir}.`;
  const step = (name: string, args: readonly string[]) =>
    runStep({
      subject: 'agent-sandbox',
      version: PEER_VERSION,
      step: name,
      command: 'go',
      args,
      cwd: dir,
      env: goEnv(),
      report,
      retryHint,
    });
  try {
    if (!(await executable(binary))) {
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      // `go install pkg@version` asks the proxy for the module's version list (to report deprecation),
      // which the proxy refuses for this module; `go get -tool` of the exact version does not.
      await writeFile(
        join(dir, 'go.mod'),
        'module sandbox-operator.local/tools/agent-sandbox\n\ngo 1.26.0\n',
      );
      await step('go get -tool', ['get', '-tool', `${PEER_PACKAGE}@${PEER_VERSION}`]);
      await mkdir(dirname(binary), { recursive: true });
      const partial = `${binary}.partial-${process.pid}`;
      await step('go build', ['build', '-trimpath', '-ldflags', '-s -w', '-o', partial, PEER_PACKAGE]);
      await chmod(partial, 0o755);
      await rename(partial, binary);
    }
    const located = await step('go list -m', ['list', '-m', '-f', '{{.Dir}}', PEER_MODULE]);
    const crds = join(located.stdout.trim(), 'k8s', 'crds');
    const read = async (file: string) => peerCrd(await readFile(join(crds, file), 'utf8'));
    return {
      ok: true,
      binary,
      crd: await read('agents.x-k8s.io_sandboxes.yaml'),
      extensionCrds: await Promise.all(
        EXTENSION_PLURALS.map((plural) => read(`extensions.agents.x-k8s.io_${plural}.yaml`)),
      ),
    };
  } catch (error: unknown) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return { ok: false, reason: `agent-sandbox ${PEER_VERSION} could not be built: ${message}` };
  }
}

/**
 * The stock CRD converts versions through the controller's webhook, which an out-of-cluster run has no
 * Service for; the bench speaks only the storage version (v1beta1), so no conversion is ever needed.
 */
export function peerCrd(text: string): Record<string, unknown> {
  const crd = parse(text) as { spec: Record<string, unknown> } & Record<string, unknown>;
  crd.spec['conversion'] = { strategy: 'None' };
  return crd;
}

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * The peer's command line: out of cluster, no webhook, no leader election, loopback listeners only;
 * `extensions` adds its SandboxTemplate, SandboxWarmPool and SandboxClaim controllers (`--extensions`).
 */
export function peerArgs(
  kubeconfig: string,
  metricsPort: number,
  probePort: number,
  { extensions = false }: { readonly extensions?: boolean } = {},
): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    '--enable-webhook=false',
    '--leader-elect=false',
    `--metrics-bind-address=127.0.0.1:${metricsPort}`,
    `--health-probe-bind-address=127.0.0.1:${probePort}`,
    ...(extensions ? ['--extensions'] : []),
  ];
}
