/**
 * A validating admission webhook's wire (admission.k8s.io/v1 AdmissionReview), generic: the body is read up to
 * a bound, checked for the fields a reviewer reads, handed to the reviewer, and its answer is sent back with the
 * request's uid. Anything it cannot read is refused, never allowed: the API server then refuses the write.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { z } from 'zod';
import { answer, type Route } from './listener.ts';

/** An AdmissionReview carries the old object in full; a Sandbox's template is bounded well below this. */
export const MAX_REVIEW_BYTES = 4 * 1024 * 1024;

const reviewSchema = z.object({
  apiVersion: z.literal('admission.k8s.io/v1'),
  kind: z.literal('AdmissionReview'),
  request: z.looseObject({
    uid: z.string().min(1),
    operation: z.string(),
    namespace: z.string().optional(),
    name: z.string().optional(),
    resource: z.looseObject({ group: z.string(), resource: z.string() }),
    subResource: z.string().optional(),
    userInfo: z.looseObject({ username: z.string().optional() }),
    object: z.unknown().optional(),
    oldObject: z.unknown().optional(),
  }),
});

export type AdmissionRequest = z.infer<typeof reviewSchema>['request'];
export type AdmissionAnswer =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly code: number; readonly reason: string; readonly message: string };
export type Reviewer = (request: AdmissionRequest) => Promise<AdmissionAnswer>;

/** A review that could not read what decides it: refused, never admitted (503: the caller's retry asks again). */
export const unreadable = (what: string, error: unknown): AdmissionAnswer => ({
  allowed: false,
  code: 503,
  reason: 'ServiceUnavailable',
  message: `could not read ${what}: ${error instanceof Error ? error.message : String(error)}`,
});

export type ParsedReview =
  { readonly ok: true; readonly request: AdmissionRequest } | { readonly ok: false; readonly error: string };

/** Pure: the request of an AdmissionReview body, or why it is not one. */
export function parseReview(body: string): ParsedReview {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    return { ok: false, error: `not JSON: ${(error as Error).message}` };
  }
  const parsed = reviewSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      error: `not an admission.k8s.io/v1 AdmissionReview: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`,
    };
  }
  return { ok: true, request: parsed.data.request };
}

/** Pure: the AdmissionReview that answers request `uid`. */
export function reviewResponse(uid: string, verdict: AdmissionAnswer): object {
  const response = verdict.allowed
    ? { uid, allowed: true }
    : {
        uid,
        allowed: false,
        status: { code: verdict.code, reason: verdict.reason, message: verdict.message },
      };
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

class BodyTooLarge extends Error {}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_REVIEW_BYTES) throw new BodyTooLarge(`body over ${MAX_REVIEW_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The route that answers POSTs to `path` with `reviewer`'s verdicts. */
export function reviewRoute(path: string, reviewer: Reviewer, log: Logger): Route {
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const parsed = parseReview(await readBody(req));
    if (!parsed.ok) {
      log.warn({ path, error: parsed.error }, 'admission review refused: the request could not be read');
      answer(res, 400, parsed.error);
      return;
    }
    const { request } = parsed;
    const verdict = await reviewer(request);
    answer(res, 200, JSON.stringify(reviewResponse(request.uid, verdict)), 'application/json');
  };
  return (requested, req, res) => {
    if (requested !== path) return false;
    if (req.method !== 'POST') {
      answer(res, 405, 'POST an AdmissionReview');
      return true;
    }
    serve(req, res).catch((error: unknown) => {
      const tooLarge = error instanceof BodyTooLarge;
      log.error({ err: error, path }, 'admission review failed; the API server refuses the write');
      if (!res.headersSent) answer(res, tooLarge ? 413 : 500, tooLarge ? error.message : 'review failed');
    });
    return true;
  };
}
