// The chart rendered as the local control plane's release: `helm template` of the chart in this repository,
// with the release name and namespace the generated admission parameters name, so what `npm start` applies has
// one home with what a platform team installs.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureBinaries } from './build.ts';
import { LocalClusterError } from './errors.ts';
import { TOOLS } from './versions.ts';

const run = promisify(execFile);
const CHART_DIR = fileURLToPath(new URL('../../charts/sandbox-operator/', import.meta.url));
/** The chart's release as the generated admission parameters name it: user system:serviceaccount:NS:NAME. */
export const OPERATOR_RELEASE = { namespace: 'sandbox-system', name: 'sandbox-operator' } as const;
export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_RELEASE.namespace}:${OPERATOR_RELEASE.name}`;

export type ChartRender = {
  /** Template files, e.g. `templates/rbac.yaml`. */
  readonly templates: readonly string[];
  /** `--set` values, e.g. `deleteReview.enabled=true`. */
  readonly set?: readonly string[];
  readonly cacheDir?: string;
};

export async function renderChart(render: ChartRender): Promise<string> {
  const { helm } = await ensureBinaries({
    tools: ['helm'],
    ...(render.cacheDir === undefined ? {} : { cacheDir: render.cacheDir }),
  });
  try {
    const { stdout } = await run(helm, [
      'template',
      OPERATOR_RELEASE.name,
      CHART_DIR,
      '--namespace',
      OPERATOR_RELEASE.namespace,
      '--kube-version',
      TOOLS['kube-apiserver'].version,
      ...render.templates.flatMap((template) => ['--show-only', template]),
      ...(render.set ?? []).flatMap((value) => ['--set', value]),
    ]);
    return stdout;
  } catch (error) {
    throw new LocalClusterError(
      'chart-render-failed',
      `helm template of the chart's ${render.templates.join(', ')} failed`,
      { subject: 'helm' },
      { cause: error },
    );
  }
}
