/**
 * A script for `node --input-type=module` inside a pod whose image has no node_modules and no per-file
 * build (the operator image runs only its bundles): our modules, imported by path from the repository root
 * (`./operator/...ts`), bundled with the image's esbuild options, fed to node on stdin.
 */
import { bundleScript } from '../../scripts/bundle-operator.mjs';

/** kubectl exec arguments that run stdin as an ES module in `container`; pass podScript(...) as its input. */
export function execScriptArgs(namespace: string, pod: string, container: string): string[] {
  return ['exec', '-i', '-n', namespace, pod, '-c', container, '--', 'node', '--input-type=module'];
}

/** The script's lines as one self-contained module. */
export function podScript(lines: readonly string[]): Promise<string> {
  return bundleScript(lines.join('\n'));
}
