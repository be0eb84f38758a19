/** The binding's ports (ports.ts) over the API server, read and written as plain JSON. */
import { PatchStrategy } from '@kubernetes/client-node';
import {
  GROUP,
  LABELS,
  SANDBOX,
  SANDBOX_CLAIM,
  SANDBOX_TEMPLATE,
  SANDBOX_WARM_POOL,
  SESSION_REFERENCE,
  VERSION,
} from '../../api/names.ts';
import { FIELD_MANAGER, type KubeClients } from '../../kube/clients.ts';
import { KubeRequestError, request, requestUnlessGone } from '../../kube/errors.ts';
import { segment, type JsonClient } from '../../kube/plain-json.ts';
import type { EventRecorder } from '../ports.ts';
import type { BindingPorts, StoredReference } from './ports.ts';
import { bindingSandboxOf, poolRecordOf, type BindingSandbox } from './records.ts';

const collection = (namespace: string, plural: string) =>
  `/apis/${GROUP}/${VERSION}/namespaces/${segment(namespace)}/${plural}`;
const item = (namespace: string, plural: string, name: string) =>
  `${collection(namespace, plural)}/${segment(name)}`;
const ofClaim = (claim: string) => ({ labelSelector: `${LABELS.sandboxClaim}=${claim}` });
const lost = { kind: 'Lost' } as const;
const gone = { kind: 'Gone' } as const;

const isStale = (error: unknown) =>
  error instanceof KubeRequestError && (error.status === 409 || error.status === 422);
const isNotFound = (error: unknown) => error instanceof KubeRequestError && error.notFound;

type Listed = { readonly items?: readonly unknown[] };
type Meta = {
  readonly metadata?: { readonly name?: string; readonly uid?: string; readonly resourceVersion?: string };
};

export function kubeBindingPorts({ json }: KubeClients, events: EventRecorder): BindingPorts {
  const sandboxOf = (raw: unknown): BindingSandbox => {
    const sandbox = bindingSandboxOf(raw);
    if (sandbox === undefined) throw new Error('the API server answered a Sandbox without name or namespace');
    return sandbox;
  };
  return {
    events,
    claims: {
      async patchMetadata(claim, ops) {
        try {
          await request('PatchFinalizers', `sandboxclaim ${claim.namespace}/${claim.name}`, () =>
            json({
              method: 'PATCH',
              path: item(claim.namespace, SANDBOX_CLAIM.plural, claim.name),
              query: { fieldManager: FIELD_MANAGER },
              body: ops,
              contentType: PatchStrategy.JsonPatch,
            }),
          );
          return 'Written';
        } catch (error) {
          if (isNotFound(error)) return gone;
          if (isStale(error)) return lost;
          throw error;
        }
      },
      async writeStatus(claim, status) {
        await request('PatchStatus', `sandboxclaim ${claim.namespace}/${claim.name}`, () =>
          json({
            method: 'PATCH',
            path: `${item(claim.namespace, SANDBOX_CLAIM.plural, claim.name)}/status`,
            query: { fieldManager: FIELD_MANAGER },
            // The uid binds the write to this incarnation of the claim.
            body: { metadata: { uid: claim.uid }, status },
            contentType: PatchStrategy.MergePatch,
          }),
        );
      },
    },
    sandboxes: {
      async listOfClaim(namespace, claim) {
        const list = (await request('List', `sandboxes of sandboxclaim ${namespace}/${claim}`, () =>
          json({ method: 'GET', path: collection(namespace, SANDBOX.plural), query: ofClaim(claim) }),
        )) as Listed;
        return (list.items ?? []).map(sandboxOf);
      },
      async bind(sandbox, ops) {
        try {
          const written = await request('Patch', `sandbox ${sandbox.namespace}/${sandbox.name}`, () =>
            json({
              method: 'PATCH',
              path: item(sandbox.namespace, SANDBOX.plural, sandbox.name),
              query: { fieldManager: FIELD_MANAGER },
              body: ops,
              contentType: PatchStrategy.JsonPatch,
            }),
          );
          return sandboxOf(written);
        } catch (error) {
          if (isNotFound(error)) return gone;
          if (isStale(error)) return lost;
          throw error;
        }
      },
      async create(namespace, body) {
        try {
          const created = await request('Create', `sandbox in ${namespace}`, () =>
            json({
              method: 'POST',
              path: collection(namespace, SANDBOX.plural),
              query: { fieldManager: FIELD_MANAGER },
              body,
            }),
          );
          return sandboxOf(created);
        } catch (error) {
          if (error instanceof KubeRequestError && error.status === 409) return lost;
          throw error;
        }
      },
      async delete(sandbox) {
        return deleteWithUid(
          json,
          `sandbox ${sandbox.namespace}/${sandbox.name}`,
          item(sandbox.namespace, SANDBOX.plural, sandbox.name),
          sandbox.uid,
        );
      },
    },
    reads: {
      async readRaw(namespace, name) {
        const body = await requestUnlessGone('Get', `sandbox ${namespace}/${name}`, () =>
          json({ method: 'GET', path: item(namespace, SANDBOX.plural, name) }),
        );
        return body === undefined ? { kind: 'Gone' } : { kind: 'Json', body };
      },
    },
    references: {
      async create(namespace, body) {
        const name = (body as Meta).metadata?.name ?? '';
        const target = `sessionreference ${namespace}/${name}`;
        try {
          const created = (await request('Create', target, () =>
            json({
              method: 'POST',
              path: collection(namespace, SESSION_REFERENCE.plural),
              query: { fieldManager: FIELD_MANAGER },
              body,
            }),
          )) as Meta;
          return {
            kind: 'Created',
            uid: created.metadata?.uid ?? '',
            resourceVersion: created.metadata?.resourceVersion ?? '',
          };
        } catch (error) {
          if (!(error instanceof KubeRequestError && error.status === 409)) throw error;
        }
        const stored = (await request('Get', target, () =>
          json({ method: 'GET', path: item(namespace, SESSION_REFERENCE.plural, name) }),
        )) as Meta;
        return { kind: 'Exists', stored: storedOf(stored) };
      },
      async listOfClaim(namespace, claim) {
        const list = (await request('List', `sessionreferences of sandboxclaim ${namespace}/${claim}`, () =>
          json({
            method: 'GET',
            path: collection(namespace, SESSION_REFERENCE.plural),
            query: ofClaim(claim),
          }),
        )) as Listed;
        return (list.items ?? []).map(storedOf);
      },
      async delete(namespace, reference) {
        return deleteWithUid(
          json,
          `sessionreference ${namespace}/${reference.name}`,
          item(namespace, SESSION_REFERENCE.plural, reference.name),
          reference.uid,
          reference.resourceVersion,
        );
      },
    },
    blueprints: {
      async readPool(namespace, name) {
        const pool = await requestUnlessGone('Get', `sandboxwarmpool ${namespace}/${name}`, () =>
          json({ method: 'GET', path: item(namespace, SANDBOX_WARM_POOL.plural, name) }),
        );
        return pool === undefined ? undefined : poolRecordOf(pool);
      },
      async readTemplate(namespace, name) {
        const template = (await requestUnlessGone('Get', `sandboxtemplate ${namespace}/${name}`, () =>
          json({ method: 'GET', path: item(namespace, SANDBOX_TEMPLATE.plural, name) }),
        )) as { metadata?: { generation?: unknown }; spec?: unknown } | undefined;
        if (template === undefined) return undefined;
        const { generation } = template.metadata ?? {};
        const spec = template.spec;
        return {
          generation: typeof generation === 'number' ? generation : 0,
          spec: typeof spec === 'object' && spec !== null ? (spec as Record<string, unknown>) : {},
        };
      },
    },
  };
}

const storedOf = (raw: unknown): StoredReference => {
  const meta = (raw as Meta).metadata;
  return { name: meta?.name ?? '', uid: meta?.uid ?? '', raw };
};

/** False when the object is gone, another incarnation, or (given a resourceVersion) written since. */
async function deleteWithUid(
  json: JsonClient,
  target: string,
  path: string,
  uid: string,
  resourceVersion?: string,
): Promise<boolean> {
  const preconditions = resourceVersion ? { uid, resourceVersion } : { uid };
  try {
    const deleted = await requestUnlessGone('Delete', target, () =>
      json({ method: 'DELETE', path, body: { preconditions } }),
    );
    return deleted !== undefined;
  } catch (error) {
    if (error instanceof KubeRequestError && error.status === 409) return false;
    throw error;
  }
}
