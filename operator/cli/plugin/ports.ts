/**
 * What the plugin reads from the cluster, as small ports: single objects (parsed at the boundary), lists
 * over a scope, and Events. Tests and the unit-tested views see only these shapes; kubectl-reads.ts
 * implements them with `kubectl get -o json`. A namespace left undefined is kubectl's own default.
 */
import type { Parsed } from '../../api/parse.ts';
import type { Sandbox, SessionReference } from '../../api/objects.ts';
import type { Scope } from './args.ts';

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

type Namespace = string | undefined;

export interface ObjectReads {
  /** The Sandbox, or undefined when it does not exist. */
  sandbox(namespace: Namespace, name: string): Promise<Parsed<Sandbox> | undefined>;
  /** The SessionReference, or undefined when it does not exist. */
  reference(namespace: Namespace, name: string): Promise<Parsed<SessionReference> | undefined>;
  /** The SessionReferences naming this sandbox (field selector spec.sandbox), malformed ones included. */
  references(namespace: Namespace, sandbox: string): Promise<readonly Parsed<SessionReference>[]>;
  /** The pods labelled with this sandbox. */
  pods(namespace: Namespace, sandbox: string): Promise<readonly PodSummary[]>;
}

export interface ListReads {
  sandboxes(scope: Scope): Promise<readonly Parsed<Sandbox>[]>;
  references(scope: Scope): Promise<readonly Parsed<SessionReference>[]>;
  /** SandboxClaims and SandboxWarmPools as the API server answered them (the views read them field by field). */
  sandboxClaims(scope: Scope): Promise<readonly unknown[]>;
  warmPools(scope: Scope): Promise<readonly unknown[]>;
  /** The namespace kubectl uses when none is given (for messages about an object that is missing). */
  defaultNamespace(): Promise<string>;
}

export interface EventReads {
  events(namespace: Namespace, kind: string, name: string): Promise<readonly EventSummary[]>;
}

export type PluginPorts = {
  readonly objects: ObjectReads;
  readonly lists: ListReads;
  readonly events: EventReads;
};
