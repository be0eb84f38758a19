/**
 * The abnormal-true conditions that GitOps engines read (docs/health.md): kstatus (sigs.k8s.io/cli-utils, what
 * Flux and kpt wait on) takes `Reconciling=True` as InProgress and `Stalled=True` as Failed, and only then
 * looks at `Ready`. Derived from the conditions this status already carries, so they cannot disagree:
 * `Stalled` while a refusal only a person can fix is known (`Misconfigured=True`); otherwise `Reconciling`
 * while the sandbox is not yet where it is going — its pods not all ready, or its deletion under way or
 * waiting (a suspended sandbox whose pods are gone is where it is going). Never both True: kstatus takes whichever comes first.
 */
import type { Condition } from '../api/fields.ts';
import type { ConditionUpdate } from './conditions.ts';

export function healthConditions(
  conditions: readonly Condition[],
  deleting: boolean,
): readonly [ConditionUpdate, ConditionUpdate] {
  const of = (type: string) => conditions.find((c) => c.type === type);
  const misconfigured = of('Misconfigured');
  if (misconfigured?.status === 'True')
    return [
      { type: 'Reconciling', status: 'False', reason: 'Stalled', message: '' },
      { type: 'Stalled', status: 'True', reason: misconfigured.reason, message: misconfigured.message },
    ];
  const notStalled: ConditionUpdate = { type: 'Stalled', status: 'False', reason: 'NotStalled', message: '' };
  const ready = of('Ready');
  const blocked = of('DeletionBlocked');
  if (deleting && blocked?.status === 'True')
    return [
      {
        type: 'Reconciling',
        status: 'True',
        reason: 'DeletionBlocked',
        message: blocked.message === '' ? 'the deletion waits' : `the deletion waits: ${blocked.message}`,
      },
      notStalled,
    ];
  if (deleting)
    return [
      { type: 'Reconciling', status: 'True', reason: 'Terminating', message: 'the sandbox is being deleted' },
      notStalled,
    ];
  // A suspended sandbox is where it was asked to be once its pods are gone: kstatus reads it Current.
  if (ready === undefined || (ready.status !== 'True' && ready.reason !== 'Suspended'))
    return [
      {
        type: 'Reconciling',
        status: 'True',
        reason: ready?.reason ?? 'PodsNotReady',
        message: ready?.message ?? '',
      },
      notStalled,
    ];
  return [{ type: 'Reconciling', status: 'False', reason: ready.reason, message: '' }, notStalled];
}
