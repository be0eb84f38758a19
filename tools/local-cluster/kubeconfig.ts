// Kubeconfig files for the local control plane's users.
import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';

export interface KubeconfigSpec {
  readonly server: string;
  /** PEM of the certificate authority that signed the serving certificate. */
  readonly caPem: string;
  readonly user: string;
  readonly token: string;
  readonly contextName: string;
}

export function renderKubeconfig(spec: KubeconfigSpec): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: spec.contextName,
        cluster: {
          server: spec.server,
          'certificate-authority-data': Buffer.from(spec.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: spec.user, user: { token: spec.token } }],
    contexts: [
      {
        name: spec.contextName,
        context: { cluster: spec.contextName, user: spec.user, namespace: 'default' },
      },
    ],
    'current-context': spec.contextName,
    preferences: {},
  });
}

export async function writeKubeconfig(path: string, spec: KubeconfigSpec): Promise<void> {
  await writeFile(path, renderKubeconfig(spec), { mode: 0o600 });
}
