/**
 * The I/O of an attach to a suspended sandbox (resume.ts decides): the resume patch, preconditioned on the
 * version read, and the wait until the sandbox is Ready, bounded by a deadline.
 */
import { PatchStrategy } from '@kubernetes/client-node';
import { KubeRequestError, request, requestUnlessGone } from '../kube/errors.ts';
import type { JsonClient } from '../kube/plain-json.ts';
import { sandboxPath } from './paths.ts';
import { judgeReadiness, judgeResume } from './resume.ts';

/** What an attach does beyond the reference: resume a suspended sandbox, and wait until it is Ready. */
export type AttachOptions = {
  /**
   * Resume a sandbox suspended by its spec (`spec.operatingMode: Suspended`): default true. False attaches and
   * leaves it suspended. A sandbox suspended as idle resumes by the attach itself, whatever this says.
   */
  readonly resume?: boolean;
  /** Wait until the sandbox is Ready, at most `deadlineMs`; polled every `pollMs` (default 500). */
  readonly waitReady?: { readonly deadlineMs: number; readonly pollMs?: number };
};

/** The attaching identity may not resume the sandbox (HTTP 403 on the patch); its reference stays Attached. */
export class SandboxResumeForbiddenError extends Error {
  readonly kind = 'SandboxResumeForbidden';
  constructor(
    readonly namespace: string,
    readonly sandbox: string,
    options?: ErrorOptions,
  ) {
    super(
      `sandbox ${namespace}/${sandbox} is suspended (spec.operatingMode: Suspended) and this identity may not ` +
        'patch it to Running (HTTP 403); the session stays attached: grant it patch on sandboxes, or have ' +
        'someone who may set spec.operatingMode: Running',
      options,
    );
    this.name = 'SandboxResumeForbiddenError';
  }
}

/** The sandbox was not Ready by the deadline, or was deleted while the attach waited. */
export class SandboxNotReadyError extends Error {
  readonly kind = 'SandboxNotReady';
  constructor(
    readonly namespace: string,
    readonly sandbox: string,
    readonly reason: 'Deadline' | 'Deleting' | 'Gone',
    readonly deadlineMs: number,
    /** What the last read showed (phase, Ready reason). */
    readonly seen: string,
  ) {
    super(
      reason === 'Deadline'
        ? `sandbox ${namespace}/${sandbox} was not Ready within ${deadlineMs} ms (last seen: ${seen}); the session stays attached`
        : `sandbox ${namespace}/${sandbox} ${reason === 'Gone' ? 'is gone' : 'is being deleted'}; it will not become Ready`,
    );
    this.name = 'SandboxNotReadyError';
  }
}

const RESUME_ATTEMPTS = 5;

/**
 * Resumes the sandbox `body` (the fence's live read) shows suspended by its spec: a JSON Patch that tests the
 * version read, so a change since (another resume, a re-suspension) is read again, never overwritten.
 */
export async function resumeIfSuspended(
  json: JsonClient,
  namespace: string,
  sandbox: string,
  body: unknown,
): Promise<void> {
  const path = sandboxPath(namespace, sandbox);
  const what = `sandbox ${namespace}/${sandbox}`;
  let current = body;
  for (let attempt = 1; ; attempt += 1) {
    const judgement = judgeResume(current);
    if (judgement.kind !== 'Resume') return;
    try {
      await request('Patch', what, () =>
        json({
          method: 'PATCH',
          path,
          body: [
            { op: 'test', path: '/metadata/resourceVersion', value: judgement.resourceVersion },
            { op: 'replace', path: '/spec/operatingMode', value: 'Running' },
          ],
          contentType: PatchStrategy.JsonPatch,
        }),
      );
      return;
    } catch (error) {
      if (error instanceof KubeRequestError && error.status === 403)
        throw new SandboxResumeForbiddenError(namespace, sandbox, { cause: error });
      const changed = error instanceof KubeRequestError && (error.status === 409 || error.status === 422);
      if (!changed || attempt >= RESUME_ATTEMPTS) throw error;
    }
    current = await requestUnlessGone('Get', what, () => json({ method: 'GET', path }));
  }
}

export async function waitUntilReady(
  json: JsonClient,
  namespace: string,
  sandbox: string,
  wait: NonNullable<AttachOptions['waitReady']>,
  now: () => number = Date.now,
): Promise<void> {
  const path = sandboxPath(namespace, sandbox);
  const deadline = now() + wait.deadlineMs;
  let seen = 'not read yet';
  for (;;) {
    const body: unknown = await requestUnlessGone('Get', `sandbox ${namespace}/${sandbox}`, () =>
      json({ method: 'GET', path }),
    );
    const readiness = judgeReadiness(body);
    if (readiness.kind === 'Ready') return;
    if (readiness.kind !== 'NotReady')
      throw new SandboxNotReadyError(namespace, sandbox, readiness.kind, wait.deadlineMs, seen);
    seen = readiness.seen;
    const left = deadline - now();
    if (left <= 0) throw new SandboxNotReadyError(namespace, sandbox, 'Deadline', wait.deadlineMs, seen);
    await new Promise((resolve) => setTimeout(resolve, Math.min(wait.pollMs ?? 500, left)));
  }
}
