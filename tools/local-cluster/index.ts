// The local control plane: Kubernetes components built from Go modules and run on loopback.
export { ensureBinaries, type BinaryPaths, type EnsureBinariesOptions } from './build.ts';
export { cacheRoot } from './cache.ts';
export {
  startLocalCluster,
  DEFAULT_CRD_DIR,
  type LocalCluster,
  type LocalClusterOptions,
  type ControlPlaneTool,
} from './control-plane.ts';
export { LocalClusterError, type LocalClusterErrorKind } from './errors.ts';
export { runKubectl, type KubectlResult, type KubectlOptions } from './kubectl.ts';
export { formatBuildEvent, type BuildEvent, type BuildReporter } from './run-step.ts';
export { ALL_TOOLS, CONTROL_PLANE_TOOLS, TOOLS, type ToolName } from './versions.ts';
export { kwokNodeName } from './addons.ts';
export { RESTRICTED_USER, ADMIN_USER } from './auth.ts';
export { provisionOperatorIdentity } from './operator-identity.ts';
export { OPERATOR_RELEASE, OPERATOR_USER } from './chart.ts';
export { registerOperatorReview, type OperatorReview } from './operator-review.ts';
