/** Small helpers the scenarios share. */
import { GROUP, SANDBOX, VERSION } from '../../../../operator/api/names.ts';
import { JSON_PATCH } from '../../../../operator/kube/clients.ts';
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

/** Drops the scenarios' finalizer (the operator's may remain), testing the list first. */
export async function releaseHold(namespace: string, sandbox: string): Promise<void> {
  const current = await getSandbox(namespace, sandbox);
  const finalizers = current?.metadata.finalizers ?? [];
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
}

/** Waits until the reference exists (an attach's write has landed). */
export async function referenceExists(namespace: string, name: string): Promise<void> {
  await eventually(`reference ${name} written`, async () =>
    (await getReference(namespace, name)) === undefined ? pending('not yet') : true,
  );
}
