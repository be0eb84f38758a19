/**
 * The namespaces an administrator opted in to the shell reaper's Privileged mode (issue 26 #2), from a watch
 * of Namespaces labelled `sandbox.agents.dev/shell-reaper-privileged=allowed`: the sandbox pod builder asks
 * it before it runs a root sidecar (operator/sidecar/injection/mode.ts). The selector names the value, so a
 * namespace whose label is removed or changed leaves the selection (the watch says DELETED) and is no
 * longer opted in. One watch, a name per opted-in namespace.
 */
import type { WatchedResource } from '../../runtime/watcher.ts';
import { PRIVILEGED_REAPER_ALLOWED, PRIVILEGED_REAPER_LABEL } from '../../sidecar/injection/mode.ts';
import { LabelledNamespaces } from './labelled-namespaces.ts';

/** The opted-in namespaces: all of them, or only the one the operator watches. */
export function privilegedReaperResource(watchNamespace: string | undefined): WatchedResource {
  return {
    name: 'privileged-reaper-namespaces',
    apiVersion: 'v1',
    kind: 'Namespace',
    path: '/api/v1/namespaces',
    labelSelector: `${PRIVILEGED_REAPER_LABEL}=${PRIVILEGED_REAPER_ALLOWED}`,
    ...(watchNamespace === undefined ? {} : { fieldSelector: `metadata.name=${watchNamespace}` }),
  };
}

/** The opted-in namespaces, by name. */
export class PrivilegedReaperNamespaces extends LabelledNamespaces {}
