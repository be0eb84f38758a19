// One error type for the local control plane; `kind` names the step that failed.

export type LocalClusterErrorKind =
  | 'go-missing'
  | 'tool-missing'
  | 'build-step-failed'
  | 'lock-timeout'
  | 'process-failed'
  | 'not-ready'
  | 'crd-install-failed'
  | 'invalid-input'
  | 'operator-identity-failed'
  | 'chart-render-failed'
  | 'operator-review-failed';

export interface LocalClusterErrorDetails {
  /** The tool or component concerned, e.g. `kube-apiserver`. */
  readonly subject?: string;
  /** The build step or start-up phase, e.g. `go build`. */
  readonly step?: string;
  /** The last lines the failing command or process wrote. */
  readonly outputTail?: string;
  /** What a person should do next. */
  readonly hint?: string;
}

export class LocalClusterError extends Error {
  override readonly name = 'LocalClusterError';
  readonly kind: LocalClusterErrorKind;
  readonly details: LocalClusterErrorDetails;

  constructor(
    kind: LocalClusterErrorKind,
    message: string,
    details: LocalClusterErrorDetails = {},
    options?: { cause?: unknown },
  ) {
    const parts = [message];
    if (details.outputTail !== undefined && details.outputTail.trim() !== '') {
      parts.push(`--- last output ---\n${details.outputTail.trimEnd()}`);
    }
    if (details.hint !== undefined) parts.push(details.hint);
    super(parts.join('\n'), options);
    this.kind = kind;
    this.details = details;
  }
}

/** Keeps the last `maxLines` lines of a growing text, for error messages. */
export function tail(text: string, maxLines = 30): string {
  const lines = text.trimEnd().split('\n');
  return lines.slice(-maxLines).join('\n');
}
