/** The API paths of the objects the client reads and writes. */
import { GROUP, SANDBOX, SANDBOX_CLAIM, SESSION_REFERENCE, VERSION } from '../api/names.ts';
import { segment } from '../kube/plain-json.ts';

const namespaced = (namespace: string, plural: string) =>
  `/apis/${GROUP}/${VERSION}/namespaces/${segment(namespace)}/${plural}`;

export const referencesPath = (namespace: string) => namespaced(namespace, SESSION_REFERENCE.plural);
export const referencePath = (namespace: string, name: string) =>
  `${referencesPath(namespace)}/${segment(name)}`;
export const sandboxPath = (namespace: string, name: string) =>
  `${namespaced(namespace, SANDBOX.plural)}/${segment(name)}`;

export const sandboxClaimsPath = (namespace: string) => namespaced(namespace, SANDBOX_CLAIM.plural);
export const sandboxClaimPath = (namespace: string, name: string) =>
  `${sandboxClaimsPath(namespace)}/${segment(name)}`;
