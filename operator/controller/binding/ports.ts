/**
 * The binding's I/O, as role interfaces (kube-binding-api.ts implements them on the plain-JSON client). Every
 * read the binding decides a write on is live (a consistent read), never the cache's — but for the pool's
 * identity and the candidates, which only suggest: the binding's patch tests what they said (bind.ts).
 */
import type { JsonPatchOp } from '../finalizer.ts';
import type { EventRecorder } from '../ports.ts';
import type { BindingSandbox, ClaimRecord, ClaimStatus } from './records.ts';

/** A JSON Patch whose `test` failed (422) or whose precondition did not hold (409): someone wrote first. */
export type Lost = { readonly kind: 'Lost' };
export type Gone = { readonly kind: 'Gone' };

export interface ClaimWrites {
  /** A JSON Patch on the claim's metadata (its finalizer); Lost when a test failed. */
  patchMetadata(claim: ClaimRecord, ops: readonly JsonPatchOp[]): Promise<'Written' | Lost | Gone>;
  writeStatus(claim: ClaimRecord, status: ClaimStatus): Promise<void>;
}

export interface ClaimedSandboxes {
  /** Consistent LIST of the sandboxes labelled with this claim. */
  listOfClaim(namespace: string, claim: string): Promise<BindingSandbox[]>;
  /** The binding's patch; the sandbox as written, or why it was not. */
  bind(sandbox: BindingSandbox, ops: readonly JsonPatchOp[]): Promise<BindingSandbox | Lost | Gone>;
  create(namespace: string, body: unknown): Promise<BindingSandbox | Lost>;
  /** Delete preconditioned on the uid; false when it was gone or is another incarnation. */
  delete(sandbox: BindingSandbox): Promise<boolean>;
}

/** The live read the fence judges (the client's fence.ts reads it). */
export interface SandboxReads {
  readRaw(namespace: string, name: string): Promise<{ kind: 'Gone' } | { kind: 'Json'; body: unknown }>;
}

export type StoredReference = {
  readonly name: string;
  readonly uid: string;
  /** The version this binding created; a withdraw is preconditioned on it (a re-attach since keeps it). */
  readonly resourceVersion?: string;
  readonly raw: unknown;
};

export interface ClaimReferences {
  /** Creates it; on 409 the stored one (to compare fixed fields). */
  create(
    namespace: string,
    body: unknown,
  ): Promise<
    { kind: 'Created'; uid: string; resourceVersion: string } | { kind: 'Exists'; stored: StoredReference }
  >;
  /** Consistent LIST of the references labelled with this claim. */
  listOfClaim(namespace: string, claim: string): Promise<StoredReference[]>;
  /**
   * Delete preconditioned on the uid, and on the resourceVersion when the reference carries one; false when it
   * was gone, is another incarnation or was written since.
   */
  delete(namespace: string, reference: StoredReference): Promise<boolean>;
}

export type PoolRead = {
  readonly uid: string;
  readonly templateName: string | undefined;
  readonly deleting: boolean;
};
export type TemplateRead = { readonly generation: number; readonly spec: Record<string, unknown> };

export interface Blueprints {
  readPool(namespace: string, name: string): Promise<PoolRead | undefined>;
  readTemplate(namespace: string, name: string): Promise<TemplateRead | undefined>;
}

export type BindingPorts = {
  readonly claims: ClaimWrites;
  readonly sandboxes: ClaimedSandboxes;
  readonly reads: SandboxReads;
  readonly references: ClaimReferences;
  readonly blueprints: Blueprints;
  readonly events: EventRecorder;
};
