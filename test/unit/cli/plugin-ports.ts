/** The plugin's ports over fixed objects, for its unit tests. */
import type { Sandbox, SessionReference } from '../../../operator/api/objects.ts';
import type { Parsed } from '../../../operator/api/parse.ts';
import type { EventSummary, PluginPorts } from '../../../operator/cli/plugin/ports.ts';

/** Ports over fixed objects; `reads` records what was asked, to show the plugin asks only for its sandbox. */
export function fakePorts(
  objects: {
    sandboxes?: Parsed<Sandbox>[];
    references?: Parsed<SessionReference>[];
    events?: EventSummary[];
    sandboxClaims?: unknown[];
    warmPools?: unknown[];
  },
  failing: { events?: Error } = {},
) {
  const reads: string[] = [];
  const nameOf = <T extends { metadata: { name: string } }>(p: Parsed<T>) =>
    p.ok ? p.value.metadata.name : p.error.objectKey.split('/')[1];
  const named = <T extends { metadata: { name: string } }>(list: Parsed<T>[] | undefined, name: string) =>
    list?.find((p) => nameOf(p) === name);
  const ports: PluginPorts = {
    objects: {
      sandbox: (namespace, name) => {
        reads.push(`sandbox ${namespace}/${name}`);
        return Promise.resolve(named(objects.sandboxes, name));
      },
      reference: (namespace, name) => {
        reads.push(`reference ${namespace}/${name}`);
        return Promise.resolve(named(objects.references, name));
      },
      references: (namespace, name) => {
        reads.push(`references of ${namespace}/${name}`);
        return Promise.resolve(objects.references ?? []);
      },
      pods: () => Promise.resolve([]),
    },
    lists: {
      sandboxes: (scope) => {
        reads.push(`sandboxes ${JSON.stringify(scope)}`);
        return Promise.resolve(objects.sandboxes ?? []);
      },
      references: (scope) => {
        reads.push(`references ${JSON.stringify(scope)}`);
        return Promise.resolve(objects.references ?? []);
      },
      sandboxClaims: (scope) => {
        reads.push(`sandboxclaims ${JSON.stringify(scope)}`);
        return Promise.resolve(objects.sandboxClaims ?? []);
      },
      warmPools: (scope) => {
        reads.push(`sandboxwarmpools ${JSON.stringify(scope)}`);
        return Promise.resolve(objects.warmPools ?? []);
      },
      defaultNamespace: () => Promise.resolve('from-context'),
    },
    events: {
      events: () => (failing.events ? Promise.reject(failing.events) : Promise.resolve(objects.events ?? [])),
    },
  };
  return { ports, reads };
}
