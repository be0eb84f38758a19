/**
 * Who holds a pod name the operator needs, and what the live turn does about it (pure). A pod create that
 * meets 409 used to count as the sandbox's pod whoever held the name: a backup restore (Velero restores pods
 * before custom resources, without owner references or finalizers) or a squatter then left the sandbox
 * Pending for ever, its "pod" unguarded and not its own (issue 27, "Backup and restore"; issue 26 #8's class).
 */
import type { Misconfiguration } from '../../runtime/forbidden.ts';
import type { PodNameHolder } from '../ports.ts';

export type PodNameJudgement =
  /** The sandbox's own pod (a cache that has yet to see it). */
  | { readonly kind: 'Ours' }
  /** Gone soon by itself: terminating, or an earlier incarnation's pod the garbage collector removes. */
  | { readonly kind: 'Wait'; readonly why: string }
  /** Labelled for this sandbox and owned by nothing: the restore's shape. Replaced by the operator's pod. */
  | { readonly kind: 'Replace'; readonly uid: string; readonly why: string }
  /** Someone else's pod: only a person can free the name. */
  | { readonly kind: 'Taken'; readonly misconfiguration: Misconfiguration };

export function judgePodNameHolder(
  sandbox: { readonly name: string; readonly uid: string },
  pod: string,
  holder: PodNameHolder,
): PodNameJudgement {
  const { controller } = holder;
  if (controller?.kind === 'Sandbox' && controller.name === sandbox.name) {
    return controller.uid === sandbox.uid
      ? { kind: 'Ours' }
      : {
          kind: 'Wait',
          why: `pod ${pod} belongs to an earlier Sandbox ${sandbox.name}; the garbage collector removes it`,
        };
  }
  if (holder.deleting) return { kind: 'Wait', why: `pod ${pod} is terminating; its replacement follows` };
  if (controller === undefined && holder.sandboxLabel === sandbox.name)
    return {
      kind: 'Replace',
      uid: holder.uid,
      why:
        `pod ${pod} carries this sandbox's label but no owner (as a backup restore leaves it, or a squatter): ` +
        `it is not guarded, so the operator deletes it and creates the sandbox's own pod under its name`,
    };
  const holderIs =
    controller === undefined ? 'owned by nothing' : `controlled by ${controller.kind} ${controller.name}`;
  return {
    kind: 'Taken',
    misconfiguration: {
      reason: 'PodNameTaken',
      refused: `pod ${pod}, the sandbox's pod name, is held by a pod that is not this sandbox's (${holderIs}, label ${
        holder.sandboxLabel === undefined ? 'absent' : holder.sandboxLabel
      })`,
      fix: `delete or rename pod ${pod}; the operator then creates the sandbox's pod under that name`,
    },
  };
}
