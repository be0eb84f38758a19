/**
 * What the plugin reads from the cluster, as two small ports: objects (parsed at the boundary) and Events.
 * Tests and the unit-tested views see only these shapes; kube-reads.ts implements them with client-node.
 */
import type { Parsed } from '../../api/parse.ts';
import type { Sandbox, SessionReference } from '../../api/objects.ts';

/** A sandbox pod as `why` shows it. */
export type PodSummary = {
  readonly name: string;
  readonly phase: string | undefined;
  readonly deleting: boolean;
  readonly finalizers: readonly string[];
};

/** A core/v1 Event about one object, newest last. */
export type EventSummary = {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  readonly count: number;
  /** When it last happened; undefined when the Event carries no time. */
  readonly lastSeen: Date | undefined;
};

export interface ObjectReads {
  /** The Sandbox, or undefined when it does not exist. */
  sandbox(namespace: string, name: string): Promise<Parsed<Sandbox> | undefined>;
  /** The SessionReference, or undefined when it does not exist. */
  reference(namespace: string, name: string): Promise<Parsed<SessionReference> | undefined>;
  /** The SessionReferences naming this sandbox (field selector spec.sandbox), malformed ones included. */
  references(namespace: string, sandbox: string): Promise<readonly Parsed<SessionReference>[]>;
  /** The pods labelled with this sandbox. */
  pods(namespace: string, sandbox: string): Promise<readonly PodSummary[]>;
}

export interface EventReads {
  events(namespace: string, kind: string, name: string): Promise<readonly EventSummary[]>;
}

export type PluginPorts = { readonly objects: ObjectReads; readonly events: EventReads };
