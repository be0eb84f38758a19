/** The reference review's reads (controller/reference-review.ts) over the API server: live GETs, never the cache. */
import { GROUP, SANDBOX_CLAIM, VERSION } from '../../api/names.ts';
import type { KubeClients } from '../../kube/clients.ts';
import { requestUnlessGone } from '../../kube/errors.ts';
import { segment } from '../../kube/plain-json.ts';
import type { ReviewReads } from '../reference-review.ts';
import { kubeSandboxApi } from './sandbox-api.ts';

const claimPath = (namespace: string, name: string) =>
  `/apis/${GROUP}/${VERSION}/namespaces/${segment(namespace)}/${SANDBOX_CLAIM.plural}/${segment(name)}`;

export function kubeReviewReads(clients: KubeClients): ReviewReads {
  return {
    sandboxes: kubeSandboxApi(clients),
    async claimDeleting(namespace, name) {
      const claim = (await requestUnlessGone('Get', `sandboxclaim ${namespace}/${name}`, () =>
        clients.json({ method: 'GET', path: claimPath(namespace, name) }),
      )) as { metadata?: { deletionTimestamp?: unknown } } | undefined;
      const deletion = claim?.metadata?.deletionTimestamp;
      return deletion !== undefined && deletion !== null;
    },
  };
}
