// Credentials of the local control plane, made without openssl: bearer tokens in a --token-auth-file
// and an ECDSA P-256 service-account signing key from node:crypto. The serving certificate is made by
// kube-apiserver itself in --cert-dir (see control-plane.ts).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const ADMIN_USER = 'admin';
/** A user in no group but system:authenticated; the chart issue grants it the operator's RBAC. */
export const RESTRICTED_USER = 'sandbox-operator';

export interface Credentials {
  readonly adminToken: string;
  readonly restrictedToken: string;
  readonly tokenAuthFile: string;
  readonly serviceAccountPublicKeyFile: string;
  readonly serviceAccountPrivateKeyFile: string;
}

function token(): string {
  return randomBytes(32).toString('base64url');
}

export async function writeCredentials(dir: string): Promise<Credentials> {
  const adminToken = token();
  const restrictedToken = token();
  // token,user,uid,"group1,group2"
  const tokenAuthFile = join(dir, 'tokens.csv');
  await writeFile(
    tokenAuthFile,
    `${adminToken},${ADMIN_USER},${ADMIN_USER},"system:masters"\n${restrictedToken},${RESTRICTED_USER},${RESTRICTED_USER}\n`,
    { mode: 0o600 },
  );
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const serviceAccountPrivateKeyFile = join(dir, 'sa-signer.key');
  const serviceAccountPublicKeyFile = join(dir, 'sa-signer.pub');
  await writeFile(serviceAccountPrivateKeyFile, privateKey.export({ type: 'sec1', format: 'pem' }), {
    mode: 0o600,
  });
  await writeFile(serviceAccountPublicKeyFile, publicKey.export({ type: 'spki', format: 'pem' }));
  return {
    adminToken,
    restrictedToken,
    tokenAuthFile,
    serviceAccountPublicKeyFile,
    serviceAccountPrivateKeyFile,
  };
}
