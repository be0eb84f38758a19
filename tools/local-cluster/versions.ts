// The pinned tool table: the single source of which tool is built from which Go module, at which
// version, with which version ldflags. Bumping a version here rebuilds that tool into a new cache key.

export type ToolName =
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubelet'
  | 'kubectl'
  | 'etcd'
  | 'kwok'
  | 'helm'
  | 'promtool';

/** A throwaway Go module that builds one or more tools from one upstream module. */
export interface ToolGroup {
  readonly id: 'kubernetes' | 'etcd' | 'kwok' | 'helm' | 'prometheus';
  readonly module: string;
  readonly version: string;
  /**
   * k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with ./staging paths,
   * which only resolve inside its own repository; outside it, each one is replaced with its published
   * v0.x release. The list is derived from the upstream go.mod at build time, never hard-coded.
   */
  readonly replaceStagingWith?: string;
}

export interface ToolSpec {
  readonly name: ToolName;
  readonly group: ToolGroup;
  /** The main package passed to `go get -tool` and `go build` (at the group's module version). */
  readonly goPackage: string;
  /** The release the binary reports; it names the cache directory. */
  readonly version: string;
  /** `-X importpath.name=value` assignments, so `--version` and `/version` report the real release. */
  readonly versionVars: Readonly<Record<string, string>>;
  /** Arguments that make the binary print its version; the build checks the output names `version`. */
  readonly versionArgs: readonly string[];
}

const KUBERNETES_VERSION = '1.36.3';
const kubernetes: ToolGroup = {
  id: 'kubernetes',
  module: 'k8s.io/kubernetes',
  version: `v${KUBERNETES_VERSION}`,
  replaceStagingWith: `v0.${KUBERNETES_VERSION.split('.').slice(1).join('.')}`,
};
const etcd: ToolGroup = { id: 'etcd', module: 'go.etcd.io/etcd/server/v3', version: 'v3.6.16' };
// kwok >= v0.8.0: older releases empty a pod's finalizers when they delete it.
const kwok: ToolGroup = { id: 'kwok', module: 'sigs.k8s.io/kwok', version: 'v0.8.0' };
const helm: ToolGroup = { id: 'helm', module: 'helm.sh/helm/v3', version: 'v3.22.0' };
// Prometheus publishes its Go module as v0.<major><minor>.<patch>: v0.316.0 is the v3.16.0 release.
const prometheus: ToolGroup = {
  id: 'prometheus',
  module: 'github.com/prometheus/prometheus',
  version: 'v0.316.0',
};
const PROMETHEUS_RELEASE = '3.16.0';

function kubernetesVersionVars(): Record<string, string> {
  const [major = '', minor = ''] = KUBERNETES_VERSION.split('.');
  const vars: Record<string, string> = {};
  // component-base feeds the servers' /version; client-go's copy feeds `kubectl version`.
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    vars[`${pkg}.gitVersion`] = kubernetes.version;
    vars[`${pkg}.gitMajor`] = major;
    vars[`${pkg}.gitMinor`] = minor;
    vars[`${pkg}.gitTreeState`] = 'clean';
  }
  return vars;
}

function kubernetesTool(
  name: 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kubelet' | 'kubectl',
): ToolSpec {
  return {
    name,
    group: kubernetes,
    goPackage: `k8s.io/kubernetes/cmd/${name}`,
    version: kubernetes.version,
    versionVars: kubernetesVersionVars(),
    versionArgs: name === 'kubectl' ? ['version', '--client'] : ['--version'],
  };
}

export const TOOLS: Readonly<Record<ToolName, ToolSpec>> = {
  'kube-apiserver': kubernetesTool('kube-apiserver'),
  'kube-controller-manager': kubernetesTool('kube-controller-manager'),
  // The real node (operator/local-cluster/node): it places pods and runs them with containerd.
  'kube-scheduler': kubernetesTool('kube-scheduler'),
  kubelet: kubernetesTool('kubelet'),
  kubectl: kubernetesTool('kubectl'),
  // etcd's release number is a constant in go.etcd.io/etcd/api/v3/version; only the commit is a var.
  etcd: {
    name: 'etcd',
    group: etcd,
    goPackage: 'go.etcd.io/etcd/server/v3',
    version: etcd.version,
    versionVars: { 'go.etcd.io/etcd/api/v3/version.GitSHA': `module-${etcd.version}` },
    versionArgs: ['--version'],
  },
  kwok: {
    name: 'kwok',
    group: kwok,
    goPackage: 'sigs.k8s.io/kwok/cmd/kwok',
    version: kwok.version,
    versionVars: { 'sigs.k8s.io/kwok/pkg/consts.Version': kwok.version.replace(/^v/, '') },
    versionArgs: ['--version'],
  },
  helm: {
    name: 'helm',
    group: helm,
    goPackage: 'helm.sh/helm/v3/cmd/helm',
    version: helm.version,
    versionVars: {
      'helm.sh/helm/v3/internal/version.version': helm.version,
      'helm.sh/helm/v3/internal/version.gitTreeState': 'clean',
    },
    versionArgs: ['version', '--short'],
  },
  // For the chart's alert tests (`promtool check rules`), not the control plane.
  promtool: {
    name: 'promtool',
    group: prometheus,
    goPackage: 'github.com/prometheus/prometheus/cmd/promtool',
    version: `v${PROMETHEUS_RELEASE}`,
    versionVars: {
      'github.com/prometheus/common/version.Version': PROMETHEUS_RELEASE,
      'github.com/prometheus/common/version.Revision': `module-${prometheus.version}`,
      'github.com/prometheus/common/version.Branch': 'release',
    },
    versionArgs: ['--version'],
  },
};

export const ALL_TOOLS: readonly ToolName[] = Object.keys(TOOLS) as ToolName[];

/** What the local control plane runs; helm and promtool are built by `cluster:build` for the chart tests only. */
export const CONTROL_PLANE_TOOLS = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kwok',
  'kubectl',
] as const satisfies readonly ToolName[];

/** What the real node adds beside the kwok nodes (when the machine can run one). */
export const REAL_NODE_TOOLS = ['kube-scheduler', 'kubelet'] as const satisfies readonly ToolName[];

export function ldflags(tool: ToolSpec): string {
  const assignments = Object.entries(tool.versionVars).map(([name, value]) => `-X ${name}=${value}`);
  return ['-s', '-w', ...assignments].join(' ');
}
