/** The API paths of the objects the client reads and writes. */
import { GROUP, SANDBOX, SESSION_REFERENCE, VERSION } from '../api/names.ts';
import { segment } from '../kube/plain-json.ts';

const namespaced = (namespace: string, plural: string) =>
  `/apis/${GROUP}/${VERSION}/namespaces/${segment(namespace)}/${plural}`;

export const referencesPath = (namespace: string) => namespaced(namespace, SESSION_REFERENCE.plural);
export const referencePath = (namespace: string, name: string) =>
  `${referencesPath(namespace)}/${segment(name)}`;
export const sandboxPath = (namespace: string, name: string) =>
  `${namespaced(namespace, SANDBOX.plural)}/${segment(name)}`;

/** The SandboxClaim kind (docs/warm-pools.md). */
export const SANDBOX_CLAIM_KIND = 'SandboxClaim';
export const sandboxClaimsPath = (namespace: string) => namespaced(namespace, 'sandboxclaims');
export const sandboxClaimPath = (namespace: string, name: string) =>
  `${sandboxClaimsPath(namespace)}/${segment(name)}`;
