/**
 * What the sandbox pod builder reads from Namespaces, for the shell reaper's mode (operator/sidecar/injection/
 * mode.ts): the PodSecurity level (namespace-levels.ts) and an administrator's opt-in to the Privileged mode
 * (privileged-reaper-namespaces.ts). Two watches, since one label selector cannot ask for either label.
 */
import type { WatchSink, WatchedResource } from '../../runtime/watcher.ts';
import type { PodSecurityLevel } from '../../sidecar/injection/mode.ts';
import { NamespaceLevels, namespaceLevelResource } from './namespace-levels.ts';
import { PrivilegedReaperNamespaces, privilegedReaperResource } from './privileged-reaper-namespaces.ts';

export type NamespaceWatches = {
  readonly sinks: readonly [WatchedResource, WatchSink][];
  /** The pod builder's view (SidecarSettings in ../pod-template.ts). */
  readonly settings: {
    readonly podSecurityLevel: (namespace: string) => PodSecurityLevel | undefined;
    readonly privilegedReaperAllowed: (namespace: string) => boolean;
  };
};

/** `onChange` hears each namespace whose level or opt-in changed: its sandboxes may now get their pods. */
export function namespaceWatches(
  watchNamespace: string | undefined,
  onChange: (namespace: string) => void,
): NamespaceWatches {
  const levels = new NamespaceLevels(onChange);
  const privileged = new PrivilegedReaperNamespaces(onChange);
  return {
    sinks: [
      [namespaceLevelResource(watchNamespace), levels],
      [privilegedReaperResource(watchNamespace), privileged],
    ],
    settings: {
      podSecurityLevel: (namespace) => levels.levelOf(namespace),
      privilegedReaperAllowed: (namespace) => privileged.allows(namespace),
    },
  };
}
