/**
 * A Sandbox being deleted and held there by a finalizer of the test's own (no operator runs in the packaging
 * tests), for an example agent host to attach to and be refused; and its release after the file's tests.
 */
import { kubectlOk } from '../../harness/kube.ts';
import { sandboxManifest } from '../controller/fixtures.ts';

const HOLD = 'example.test/hold';

export async function heldDeletion(namespace: string, name: string): Promise<void> {
  const manifest = sandboxManifest(namespace, name, { worktree: 'wt-1' });
  await kubectlOk(['apply', '-f', '-'], {
    input: JSON.stringify({ ...manifest, metadata: { ...manifest.metadata, finalizers: [HOLD] } }),
  });
  await kubectlOk(['delete', 'sandbox', name, '-n', namespace, '--wait=false']);
}

/** Lets a held deletion finish; a Sandbox already gone is fine. */
export async function releaseHeldDeletion(namespace: string, name: string): Promise<void> {
  await kubectlOk([
    'patch',
    'sandbox',
    name,
    '-n',
    namespace,
    '--type=merge',
    '-p',
    '{"metadata":{"finalizers":null}}',
  ]).catch(() => undefined);
}
