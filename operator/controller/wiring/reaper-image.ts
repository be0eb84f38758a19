/**
 * Whether the operator bounds admit the shell reaper this operator injects (issue 26 #1): when the admission
 * parameter `reaperImages` lists any image, it must list `--sidecar-image`, or every sandbox pod with the
 * reaper is refused at its create. Said once at start, with the fix, as the identity check says its own; each
 * refused create then says it again on its Sandbox (Misconfigured).
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import { KubeRequestError, request } from '../../kube/errors.ts';
import { segment, type JsonClient } from '../../kube/plain-json.ts';
import type { AdmissionParamsRef } from './identity.ts';

/** Pure: the advice when the listed images leave out the one this operator injects; undefined when they do not. */
export function reaperImageAdvice(
  sidecarImage: string,
  reaperImages: string | undefined,
  params: AdmissionParamsRef,
): string | undefined {
  const listed = (reaperImages ?? '').split(',').filter((image) => image !== '');
  if (listed.length === 0 || listed.includes(sidecarImage)) return undefined;
  const { namespace, name } = params;
  return (
    `the operator bounds admit a shell reaper only of the images [${listed.join(', ')}] (data.reaperImages of ` +
    `ConfigMap ${namespace}/${name}), but this operator injects ${sidecarImage}: every sandbox pod with the ` +
    `shell reaper will be refused. Fix: run the operator with --sidecar-image set to a listed image (the ` +
    `chart's shellReaper.image), or list it: kubectl patch configmap ${name} -n ${namespace} --type merge ` +
    `-p '{"data":{"reaperImages":"${[...listed, sidecarImage].join(',')}"}}'`
  );
}

const configMapSchema = z.object({ data: z.record(z.string(), z.string()).optional() });

/** Reads the parameters and says a mismatch once. Never throws: an unreadable ConfigMap is the identity check's to say. */
export async function checkReaperImage(
  json: JsonClient,
  params: AdmissionParamsRef,
  sidecarImage: string,
  log: Logger,
): Promise<void> {
  let answer: unknown;
  try {
    answer = await request('Get', `configmap ${params.namespace}/${params.name}`, () =>
      json({
        method: 'GET',
        path: `/api/v1/namespaces/${segment(params.namespace)}/configmaps/${segment(params.name)}`,
      }),
    );
  } catch (error) {
    const reason = error instanceof KubeRequestError && error.notFound ? 'not found' : String(error);
    log.debug({ params, reason }, 'reaper images not checked: the admission parameters are unreadable');
    return;
  }
  const reaperImages = configMapSchema.safeParse(answer).data?.data?.['reaperImages'];
  const advice = reaperImageAdvice(sidecarImage, reaperImages, params);
  if (advice !== undefined) log.error({ sidecarImage, reaperImages }, advice);
}
