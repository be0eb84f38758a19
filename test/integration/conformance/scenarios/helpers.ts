/** Small helpers the scenarios share. */
import { GROUP, SANDBOX, VERSION } from '../../../../operator/api/names.ts';
import { JSON_PATCH } from '../../../harness/kube.ts';
import { statusOf } from '../../../../operator/kube/errors.ts';
import { eventually, pending } from '../../../harness/eventually.ts';
import { getReference, getSandbox } from '../../controller/fixtures.ts';
import { customObjects } from '../../controller/operator.ts';

/** A finalizer of the scenarios' own: a deleted sandbox stays visible, deleting, until released. */
export const HOLD = 'test.sandbox.agents.dev/hold';

export const attachArgs = (namespace: string, sandbox: string, session: string) => ({
  namespace,
  sandbox,
  session,
  worktree: 'wt-9',
  route: `shared-control-v1/${session}`,
  role: 'Root',
});

/**
 * Drops the hold finalizer (the operator's may remain), testing the list first so no other finalizer is lost;
 * the operator writes its own finalizer meanwhile, so a failed test (422) reads again.
 */
export async function releaseHold(namespace: string, sandbox: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    const current = await getSandbox(namespace, sandbox);
    if (current === undefined) return;
    const finalizers = current.metadata.finalizers ?? [];
    try {
      await customObjects().patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION,
          namespace,
          plural: SANDBOX.plural,
          name: sandbox,
          body: [
            { op: 'test', path: '/metadata/finalizers', value: finalizers },
            { op: 'replace', path: '/metadata/finalizers', value: finalizers.filter((f) => f !== HOLD) },
          ],
        },
        JSON_PATCH,
      );
      return;
    } catch (error) {
      if (statusOf(error) !== 422 || attempt >= 5) throw error;
    }
  }
}

/** Waits until the reference exists (an attach's write has landed). */
export async function referenceExists(namespace: string, name: string): Promise<void> {
  await eventually(`reference ${name} written`, async () =>
    (await getReference(namespace, name)) === undefined ? pending('not yet') : true,
  );
}
