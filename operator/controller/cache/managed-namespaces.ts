/**
 * The per-namespace opt-in (issue 26): with `--managed-namespace-label key=value` (the chart's
 * `operator.managedNamespaceLabel`), the operator acts only on Sandboxes in namespaces an administrator
 * labelled so — the same label the admission bounds hold its identity to (operator/api/operator-bounds.ts,
 * parameter `managedNamespaceLabel`), so it never tries a write they would refuse. A Sandbox elsewhere is
 * skipped, and said once per namespace (a warning naming the label to set), not once per reconcile.
 */
import type { Logger } from 'pino';
import type { WatchSink, WatchedResource } from '../../runtime/watcher.ts';
import { LabelledNamespaces } from './labelled-namespaces.ts';

/** The labelled namespaces: all of them, or only the one the operator watches. */
export function managedNamespacesResource(
  label: string,
  watchNamespace: string | undefined,
): WatchedResource {
  return {
    name: 'managed-namespaces',
    apiVersion: 'v1',
    kind: 'Namespace',
    path: '/api/v1/namespaces',
    labelSelector: label,
    ...(watchNamespace === undefined ? {} : { fieldSelector: `metadata.name=${watchNamespace}` }),
  };
}

export class ManagedNamespaces extends LabelledNamespaces {
  readonly #said = new Set<string>();

  constructor(
    readonly label: string,
    onChange: (namespace: string) => void = () => undefined,
  ) {
    super((namespace) => {
      // Labelled since it was said: a later removal of the label is said again.
      this.#said.delete(namespace);
      onChange(namespace);
    });
  }

  /** Whether the operator leaves the namespace's Sandboxes alone; the first time, it says so. */
  skips(namespace: string, log: Logger): boolean {
    if (this.allows(namespace)) return false;
    if (!this.#said.has(namespace)) {
      this.#said.add(namespace);
      log.warn(
        { namespace, managedNamespaceLabel: this.label },
        `skipping the Sandboxes of namespace ${namespace}: it is not labelled ${this.label} ` +
          `(--managed-namespace-label); label it to have them managed ` +
          `(kubectl label namespace ${namespace} ${this.label})`,
      );
    }
    return true;
  }
}

/** The opt-in's watch and its judge; neither without a label (every namespace is managed). */
export function managedNamespaces(
  label: string,
  watchNamespace: string | undefined,
  onChange: (namespace: string) => void,
): { readonly sinks: readonly [WatchedResource, WatchSink][]; readonly unmanaged?: ManagedNamespaces } {
  if (label === '') return { sinks: [] };
  const unmanaged = new ManagedNamespaces(label, onChange);
  return { sinks: [[managedNamespacesResource(label, watchNamespace), unmanaged]], unmanaged };
}
