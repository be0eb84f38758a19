/** The Kubernetes side of a warm pool's turn, as one port (adapters/warm-pool-api.ts). */
import type { SandboxTemplateSpec } from '../../api/sandbox-template.ts';
import type { SandboxWarmPoolStatus } from '../../api/sandbox-warm-pool.ts';

/** A template read live: its blueprint and the generation the sandboxes record. */
export type LiveTemplate = {
  readonly name: string;
  readonly generation: number;
  readonly spec: SandboxTemplateSpec;
};

export type Preconditions = { readonly uid: string; readonly resourceVersion: string };

/** What a preconditioned delete found: done, already gone, or changed since read (bound, most likely). */
export type DeleteOutcome = 'Deleted' | 'Gone' | 'Changed';

export interface WarmPoolApi {
  /** undefined when the template does not exist (or does not parse: nothing is made from it then). */
  readTemplate(namespace: string, name: string): Promise<LiveTemplate | undefined>;
  /** Creates a Sandbox; false when one of that name exists already. */
  createSandbox(namespace: string, manifest: object): Promise<boolean>;
  deleteSandbox(namespace: string, name: string, preconditions: Preconditions): Promise<DeleteOutcome>;
  patchStatus(namespace: string, name: string, uid: string, status: SandboxWarmPoolStatus): Promise<void>;
}
