/**
 * How a view leaves the plugin: text for people (every string from the cluster made printable first), or
 * JSON / YAML for scripts, each a self-describing object with apiVersion and kind. Pure.
 */
import { stringify } from 'yaml';
import type { OutputFormat } from './args.ts';
import { inertSerialized, printableView } from './printable.ts';

/** The version of the plugin's machine-readable output; a new field is not a new version. */
export const OUTPUT_API_VERSION = 'kubectl-sandbox.sandbox.agents.dev/v1alpha1';

export type OutputKind =
  | 'SandboxReferences'
  | 'SandboxDeletion'
  | 'SessionShells'
  | 'SandboxDeletionList'
  | 'SessionReferenceList'
  | 'SandboxClaimList'
  | 'SandboxWarmPoolList';

export function render<T extends object>(
  output: OutputFormat,
  kind: OutputKind,
  view: T,
  text: (view: T) => string,
): string {
  if (output === 'text') return text(printableView(view));
  const document = {
    apiVersion: OUTPUT_API_VERSION,
    kind,
    ...(Array.isArray(view) ? { items: view } : view),
  };
  // Through JSON first, so Dates are the same RFC 3339 strings in both formats.
  const plain: unknown = JSON.parse(JSON.stringify(document));
  const serialized =
    output === 'json'
      ? `${JSON.stringify(plain, null, 2)}\n`
      : stringify(plain, { defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN', lineWidth: 0 });
  return inertSerialized(serialized);
}
