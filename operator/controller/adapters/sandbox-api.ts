/** SandboxApi over the API server, read and written as plain JSON (no generated-model walk). */
import { PatchStrategy } from '@kubernetes/client-node';
import { ANNOTATIONS, GROUP, LABELS, SANDBOX, VERSION } from '../../api/names.ts';
import { KubeRequestError, request, requestUnlessGone } from '../../kube/errors.ts';
import { segment } from '../../kube/plain-json.ts';
import { incarnationTest, type JsonPatchOp } from '../finalizer.ts';
import type { SandboxApi } from '../ports.ts';
import { statusPatchOps } from '../status.ts';
import { statusWritten } from '../lifecycle.ts';
import { FIELD_MANAGER, type KubeClients } from '../../kube/clients.ts';
import { parseSandbox } from '../../api/parse.ts';

const sandboxPath = (namespace: string, name: string) =>
  `/apis/${GROUP}/${VERSION}/namespaces/${segment(namespace)}/${SANDBOX.plural}/${segment(name)}`;

export function kubeSandboxApi({ json }: KubeClients): SandboxApi {
  return {
    async readLive(namespace, name) {
      try {
        const live = (await request('Get', `sandbox ${namespace}/${name}`, () =>
          json({ method: 'GET', path: sandboxPath(namespace, name) }),
        )) as { metadata?: { uid?: string; deletionTimestamp?: unknown; finalizers?: string[] } } | undefined;
        const deletion = live?.metadata?.deletionTimestamp;
        const parsed = parseSandbox(live);
        const erase = parsed.ok
          ? parsed.value.metadata.annotations?.[ANNOTATIONS.eraseReferences]
          : undefined;
        const worktree = parsed.ok ? parsed.value.spec.worktree : undefined;
        const claim = parsed.ok ? parsed.value.metadata.labels?.[LABELS.sandboxClaim] : undefined;
        const erasedFor = parsed.ok ? parsed.value.status?.capacity?.erasedFor : undefined;
        return {
          uid: live?.metadata?.uid ?? '',
          deleting: deletion !== undefined && deletion !== null,
          finalizers: live?.metadata?.finalizers ?? [],
          statusWritten: parsed.ok && statusWritten(parsed.value),
          ...(parsed.ok ? { podTemplate: parsed.value.spec.podTemplate } : {}),
          ...(worktree === undefined ? {} : { worktree }),
          ...(erase === undefined ? {} : { eraseRequest: erase }),
          ...(claim === undefined ? {} : { claim }),
          ...(erasedFor === undefined ? {} : { erasedFor }),
        };
      } catch (error) {
        if (error instanceof KubeRequestError && error.notFound) return undefined;
        throw error;
      }
    },
    async patchStatus({ namespace, name, uid }, before, changed, readVersion) {
      await request('PatchStatus', `sandbox ${namespace}/${name}`, () =>
        json({
          method: 'PATCH',
          path: `${sandboxPath(namespace, name)}/status`,
          query: { fieldManager: FIELD_MANAGER },
          body: statusPatchOps(uid, before, changed, readVersion),
          contentType: PatchStrategy.JsonPatch,
        }),
      );
    },
    async patchMetadata({ namespace, name, uid }, ops: readonly JsonPatchOp[]) {
      const written = (await request('PatchFinalizers', `sandbox ${namespace}/${name}`, () =>
        json({
          method: 'PATCH',
          path: sandboxPath(namespace, name),
          query: { fieldManager: FIELD_MANAGER },
          body: [incarnationTest(uid), ...ops],
          contentType: PatchStrategy.JsonPatch,
        }),
      )) as { metadata?: { resourceVersion?: string } } | undefined;
      return {
        resourceVersion: written?.metadata?.resourceVersion ?? '',
        sandbox: written === undefined ? undefined : () => parseSandbox(written),
      };
    },
    async delete(namespace, name, preconditions) {
      await requestUnlessGone('Delete', `sandbox ${namespace}/${name}`, () =>
        json({ method: 'DELETE', path: sandboxPath(namespace, name), body: { preconditions } }),
      );
    },
  };
}
