/**
 * Errors of the controller's Kubernetes I/O: one class, a `kind` naming the failing step, the HTTP status
 * when there was one, and the cause. `isRetryable` tells the error policy what to do.
 */

export type KubeStep =
  | 'List'
  | 'Watch'
  | 'Get'
  | 'Create'
  | 'Delete'
  | 'Patch'
  | 'PatchStatus'
  | 'PatchFinalizers'
  | 'Replace'
  | 'RecordEvent'
  | 'Lease';

const ADMISSION_DENIAL =
  /ValidatingAdmissionPolicy '[^']+' with binding '[^']+' denied request|admission webhook "[^"]+" denied the request/;

export class KubeRequestError extends Error {
  readonly kind = 'KubeRequestFailed';
  constructor(
    readonly step: KubeStep,
    readonly target: string,
    readonly status: number | undefined,
    options: ErrorOptions,
  ) {
    super(
      `${step} ${target} failed${status === undefined ? '' : ` with HTTP ${status}`}: ${messageOf(options.cause)}`,
      options,
    );
    this.name = 'KubeRequestError';
  }

  get notFound(): boolean {
    return this.status === 404;
  }
  /** A stale write: 409 Conflict, or 422 from a JSON Patch (finalizers, status) whose `test` no longer holds. */
  get conflict(): boolean {
    return (
      this.status === 409 ||
      (this.status === 422 && (this.step === 'PatchFinalizers' || this.step === 'PatchStatus'))
    );
  }
  get gone(): boolean {
    return this.status === 410;
  }
  /**
   * Refused by admission: a ValidatingAdmissionPolicy (403 with `reason: Forbidden`, 422 without a reason) or
   * a webhook (400 unless it sets its own code). A setting refuses it, so the same request is refused again.
   */
  get admissionDenied(): boolean {
    return (
      (this.status === 400 || this.status === 403 || this.status === 422) &&
      ADMISSION_DENIAL.test(this.message)
    );
  }
  /** A create refused because its namespace is being deleted: nothing new can exist there any more. */
  get namespaceTerminating(): boolean {
    return this.status === 403 && this.message.includes('because it is being terminated');
  }
}

/** The HTTP status of a client-node ApiException or a Watch error, if any. */
export function statusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const record = error as { code?: unknown; statusCode?: unknown };
  if (typeof record.code === 'number') return record.code;
  if (typeof record.statusCode === 'number') return record.statusCode;
  return undefined;
}

function messageOf(cause: unknown): string {
  if (typeof cause === 'object' && cause !== null && 'body' in cause) {
    const body = cause.body;
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    try {
      const parsed = JSON.parse(text) as { message?: unknown };
      if (typeof parsed.message === 'string') return parsed.message;
    } catch {
      return text.slice(0, 500);
    }
  }
  return cause instanceof Error ? cause.message : String(cause);
}

/** Runs one request, turning any failure into a KubeRequestError naming the step and target. */
export async function request<T>(step: KubeStep, target: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new KubeRequestError(step, target, statusOf(error), { cause: error });
  }
}

/** Like `request`, but a 404 is a value (undefined): the object is already gone. */
export async function requestUnlessGone<T>(
  step: KubeStep,
  target: string,
  call: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await request(step, target, call);
  } catch (error) {
    if (error instanceof KubeRequestError && error.notFound) return undefined;
    throw error;
  }
}
