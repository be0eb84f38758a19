/**
 * The CRDs a side-by-side run installs when the control plane starts: ours (and our policies) plus the peer's,
 * so every kind is served before the garbage collector starts.
 */
import { cp, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CRD_DIR } from '@sandbox-operator/local-cluster';

/** A temporary directory with our CRD directory's files and each peer CRD (none when the peer is absent). */
export async function crdDir(peerCrds: readonly Record<string, unknown>[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-peer-crds-'));
  await cp(DEFAULT_CRD_DIR, dir, { recursive: true });
  await Promise.all(
    peerCrds.map((crd, i) => {
      const name = (crd['metadata'] as { name?: string } | undefined)?.name ?? String(i);
      return writeFile(join(dir, `zz-agent-sandbox-${name}.yaml`), JSON.stringify(crd));
    }),
  );
  return dir;
}
