/**
 * Pure: the Sandbox a pool makes (docs/warm-pools.md): a copy of its template's blueprint, no worktree (every
 * session's reference is foreign to it, so the exclusivity decision keeps it while any reference exists), the
 * pool and template labels, the template's generation, and the pool as controller owner while it is
 * unclaimed (a binding removes the owner, so garbage collection of a deleted pool never reaches it). It is
 * born holding its deletion for the decision, as a cold claim's sandbox is: a claim's reference can reach it
 * before the Sandbox reconciler's first turn, and the finalizer that turn would add costs a write per sandbox.
 */
import {
  ANNOTATIONS,
  API_VERSION,
  EXCLUSIVITY_FINALIZER,
  LABELS,
  SANDBOX,
  SANDBOX_WARM_POOL,
} from '../../api/names.ts';
import { POOL_SANDBOX_SUFFIX_LENGTH } from '../../api/limits.ts';
import type { LiveTemplate } from './ports.ts';

/** The alphabet of the API server's generateName: no vowels (no words), no look-alikes. */
const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** A sandbox name `<pool>-<5 random>`, from `random` (0 ≤ x < 1) drawn once per character. */
export function poolSandboxName(pool: string, random: () => number): string {
  let suffix = '';
  for (let i = 0; i < POOL_SANDBOX_SUFFIX_LENGTH; i += 1)
    suffix += SUFFIX_ALPHABET[Math.floor(random() * SUFFIX_ALPHABET.length)] ?? 'b';
  return `${pool}-${suffix}`;
}

export function poolSandbox(
  pool: { readonly namespace: string; readonly name: string; readonly uid: string },
  template: LiveTemplate,
  name: string,
): object {
  return {
    apiVersion: API_VERSION,
    kind: SANDBOX.kind,
    metadata: {
      name,
      namespace: pool.namespace,
      labels: { [LABELS.warmPool]: pool.name, [LABELS.template]: template.name },
      annotations: { [ANNOTATIONS.templateGeneration]: String(template.generation) },
      ownerReferences: [
        {
          apiVersion: API_VERSION,
          kind: SANDBOX_WARM_POOL.kind,
          name: pool.name,
          uid: pool.uid,
          controller: true,
        },
      ],
      finalizers: [EXCLUSIVITY_FINALIZER],
    },
    spec: template.spec,
  };
}
