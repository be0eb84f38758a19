/**
 * `kubectl sandbox refs`: the SessionReferences of a sandbox and which of them are foreign to its worktree.
 * Foreignness comes from the operator's one predicate (isForeignReference); a malformed reference counts as
 * foreign, because the operator fails closed on it. Pure.
 */
import type { Sandbox, SessionReference } from '../../api/objects.ts';
import type { Parsed } from '../../api/parse.ts';
import { isForeignReference } from '../../exclusivity/foreign.ts';

export type ReferenceRow = {
  readonly name: string;
  readonly session: string | undefined;
  readonly worktree: string | undefined;
  readonly role: string | undefined;
  readonly state: string | undefined;
  /** The phase of the session's latest turn, when the agent host has written one. */
  readonly turn: string | undefined;
  readonly foreign: boolean;
  /** `field: problem` when the object does not match the schema. */
  readonly malformed: string | undefined;
};

export type SandboxIdentity = {
  readonly namespace: string;
  readonly name: string;
  readonly worktree: string | undefined;
};

export type ReferencesView = {
  readonly sandbox: SandboxIdentity;
  readonly rows: readonly ReferenceRow[];
  readonly counts: {
    readonly total: number;
    readonly attached: number;
    readonly detached: number;
    readonly foreign: number;
    readonly malformed: number;
  };
};

export const identityOf = (sandbox: Sandbox): SandboxIdentity => ({
  namespace: sandbox.metadata.namespace,
  name: sandbox.metadata.name,
  worktree: sandbox.spec.worktree,
});

export function referenceRow(parsed: Parsed<SessionReference>, sandbox: SandboxIdentity): ReferenceRow {
  if (!parsed.ok) {
    const { error } = parsed;
    return {
      name: error.objectKey.split('/').at(-1) ?? error.objectKey,
      session: undefined,
      worktree: undefined,
      role: undefined,
      state: undefined,
      turn: undefined,
      foreign: true,
      malformed: `${error.field}: ${error.problem}`,
    };
  }
  const { metadata, spec, status } = parsed.value;
  return {
    name: metadata.name,
    session: spec.session,
    worktree: spec.worktree,
    role: spec.role,
    state: spec.state,
    turn: status?.turn?.phase,
    foreign: isForeignReference({ worktree: spec.worktree }, { worktree: sandbox.worktree }),
    malformed: undefined,
  };
}

export function referencesView(
  sandbox: Sandbox,
  references: readonly Parsed<SessionReference>[],
  options: { readonly foreignOnly: boolean } = { foreignOnly: false },
): ReferencesView {
  const identity = identityOf(sandbox);
  const all = references
    .map((parsed) => referenceRow(parsed, identity))
    .sort((a, b) => a.name.localeCompare(b.name));
  const count = (keep: (row: ReferenceRow) => boolean) => all.filter(keep).length;
  return {
    sandbox: identity,
    rows: options.foreignOnly ? all.filter((row) => row.foreign) : all,
    counts: {
      total: all.length,
      attached: count((row) => row.state === 'Attached'),
      detached: count((row) => row.state === 'Detached'),
      foreign: count((row) => row.foreign),
      malformed: count((row) => row.malformed !== undefined),
    },
  };
}
