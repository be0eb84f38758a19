// Installs the CustomResourceDefinitions of crds/*.yaml (then admission policies of crds/policies/*.yaml)
// with server-side apply, and waits until each CRD is Established and its versions are served.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { LocalClusterError } from './errors.ts';
import type { KubectlResult } from './kubectl.ts';
import { get, poll } from './net.ts';

export interface CrdSummary {
  readonly name: string;
  readonly group: string;
  readonly plural: string;
  readonly servedVersions: readonly string[];
}

export interface InstallCrdsOptions {
  readonly dir: string;
  readonly kubectl: (args: readonly string[]) => Promise<KubectlResult>;
  readonly server: string;
  readonly caPem: string;
  readonly token: string;
  readonly timeoutMs?: number;
}

export interface InstalledManifests {
  readonly crds: readonly CrdSummary[];
  readonly files: readonly string[];
}

async function yamlFiles(dir: string): Promise<string[]> {
  try {
    const names = await readdir(dir, { withFileTypes: true });
    return names
      .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
      .map((e) => join(dir, e.name))
      .sort();
  } catch (error: unknown) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

interface CrdDocument {
  kind?: string;
  metadata?: { name?: string };
  spec?: { group?: string; names?: { plural?: string }; versions?: { name?: string; served?: boolean }[] };
}

export function summarizeCrds(text: string): CrdSummary[] {
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as CrdDocument | null)
    .filter((doc): doc is CrdDocument => doc?.kind === 'CustomResourceDefinition')
    .map((doc) => ({
      name: doc.metadata?.name ?? '',
      group: doc.spec?.group ?? '',
      plural: doc.spec?.names?.plural ?? '',
      servedVersions: (doc.spec?.versions ?? []).filter((v) => v.served === true).map((v) => v.name ?? ''),
    }));
}

async function apply(options: InstallCrdsOptions, files: readonly string[], step: string): Promise<void> {
  if (files.length === 0) return;
  const args = [
    'apply',
    '--server-side',
    '--force-conflicts',
    '--field-manager=sandbox-operator-local-cluster',
  ];
  const result = await options.kubectl([...args, ...files.flatMap((f) => ['-f', f])]);
  if (result.exitCode !== 0) {
    throw new LocalClusterError('crd-install-failed', `kubectl apply of ${files.join(', ')} failed`, {
      step,
      outputTail: result.stderr,
      hint: 'Regenerate the CRDs with `npm run crds` and check them with `kubectl apply --dry-run=server`.',
    });
  }
}

export async function installCrds(options: InstallCrdsOptions): Promise<InstalledManifests> {
  const crdFiles = await yamlFiles(options.dir);
  const policyFiles = await yamlFiles(join(options.dir, 'policies'));
  const crds = (
    await Promise.all(crdFiles.map(async (f) => summarizeCrds(await readFile(f, 'utf8'))))
  ).flat();
  await apply(options, crdFiles, 'apply CRDs');
  for (const crd of crds) await waitServed(options, crd);
  // Policies may refer to the new types, so they follow the CRDs.
  await apply(options, policyFiles, 'apply admission policies');
  return { crds, files: [...crdFiles, ...policyFiles] };
}

/**
 * The admission parameters crds/policies/ installs (operator/api/admission.ts; named here, as this package
 * imports nothing of operator/), set as an administrator of this cluster would.
 */
const ADMISSION_PARAMS = { name: 'sandbox-operator-admission', namespace: 'sandbox-system' } as const;

/**
 * Kwok nodes are reached only by naming them (there is no scheduler without a real node), and the pod-template
 * policy refuses a `nodeName` not in `podTemplateNodeNames`: list the local control plane's kwok nodes there.
 */
export async function allowTemplateNodes(
  options: Pick<InstallCrdsOptions, 'kubectl'>,
  installed: InstalledManifests,
  nodes: readonly string[],
): Promise<void> {
  if (nodes.length === 0) return;
  await setAdmissionParams(
    options,
    installed,
    { podTemplateNodeNames: nodes.join(',') },
    'allow the kwok nodes in Sandbox templates',
  );
}

/**
 * The real node's loopback policy (node/loopback-api.ts) puts sandbox pods on the host network after the
 * operator created them: say so, or the operator bounds refuse them as a leaked token's.
 */
export async function allowSandboxPodsOnHostNetwork(
  options: Pick<InstallCrdsOptions, 'kubectl'>,
  installed: InstalledManifests,
): Promise<void> {
  await setAdmissionParams(
    options,
    installed,
    { sandboxPodsOnHostNetwork: 'allowed' },
    'allow sandbox pods on the host network',
  );
}

async function setAdmissionParams(
  options: Pick<InstallCrdsOptions, 'kubectl'>,
  installed: InstalledManifests,
  data: Readonly<Record<string, string>>,
  step: string,
): Promise<void> {
  if (!installed.files.some((f) => f.includes('/policies/'))) return;
  const patch = JSON.stringify({ data });
  const { name, namespace } = ADMISSION_PARAMS;
  const result = await options.kubectl([
    'patch',
    'configmap',
    name,
    '-n',
    namespace,
    '--type=merge',
    '-p',
    patch,
  ]);
  if (result.exitCode !== 0) {
    throw new LocalClusterError(
      'crd-install-failed',
      `kubectl patch of configmap ${namespace}/${name} failed`,
      {
        step,
        outputTail: result.stderr,
        hint: 'crds/policies/ should create this ConfigMap; regenerate it with `npm run crds`.',
      },
    );
  }
}

interface CrdStatus {
  status?: { conditions?: { type?: string; status?: string; message?: string }[] };
}

async function waitServed(options: InstallCrdsOptions, crd: CrdSummary): Promise<void> {
  const auth = { ca: options.caPem, token: options.token };
  const timeoutMs = options.timeoutMs ?? 30_000;
  let rejection: string | null = null;
  const established = await poll(
    async () => {
      const res = await get(
        `${options.server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.name}`,
        auth,
      );
      if (res.status !== 200) return undefined;
      const conditions = (JSON.parse(res.body) as CrdStatus).status?.conditions ?? [];
      const names = conditions.find((c) => c.type === 'NamesAccepted');
      if (names?.status === 'False') rejection = names.message ?? 'names not accepted';
      return conditions.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
    },
    { timeoutMs, abortIf: () => rejection },
  );
  if (!established.ok) {
    throw new LocalClusterError(
      'crd-install-failed',
      `CRD ${crd.name} not Established: ${established.reason}`,
      {
        subject: crd.name,
        step: 'wait for Established',
      },
    );
  }
  for (const version of crd.servedVersions) {
    const served = await poll(
      async () => {
        const res = await get(`${options.server}/apis/${crd.group}/${version}`, auth);
        if (res.status !== 200) return undefined;
        const list = JSON.parse(res.body) as { resources?: { name?: string }[] };
        return list.resources?.some((r) => r.name === crd.plural) === true ? true : undefined;
      },
      { timeoutMs },
    );
    if (!served.ok) {
      throw new LocalClusterError(
        'crd-install-failed',
        `${crd.plural}.${crd.group}/${version} not served: ${served.reason}`,
        {
          subject: crd.name,
          step: 'wait for discovery',
        },
      );
    }
  }
}
