/**
 * The API server's audit log, read as it grows: JSON lines, one event per completed request, grouped by
 * the namespace they touched (a namespace's own writes count as its own). The soak judges its invariants
 * from these events alone — what the API server recorded, not what a client believed.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';

export type AuditObjectRef = {
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly apiGroup?: string;
};

export type AuditEvent = {
  readonly auditID: string;
  readonly stage: string;
  readonly verb: string;
  readonly requestURI: string;
  readonly userAgent?: string;
  readonly user: { readonly username: string };
  readonly objectRef?: AuditObjectRef;
  /** A refusal's metav1.Status carries its message (an admission policy's denial names the policy). */
  readonly responseStatus?: { readonly code?: number; readonly message?: string };
  readonly requestObject?: unknown;
  readonly responseObject?: unknown;
  readonly requestReceivedTimestamp: string;
  readonly stageTimestamp: string;
};

/** An event with its times parsed (ms; the log has microseconds, which ordering within 1 ms never needs). */
export type TimedEvent = AuditEvent & { readonly received: number; readonly completed: number };

export function namespaceOf(event: AuditEvent): string | undefined {
  const ref = event.objectRef;
  if (ref?.namespace !== undefined) return ref.namespace;
  return ref?.resource === 'namespaces' ? ref.name : undefined;
}

export function timed(event: AuditEvent): TimedEvent {
  return {
    ...event,
    received: Date.parse(event.requestReceivedTimestamp),
    completed: Date.parse(event.stageTimestamp),
  };
}

export class AuditTail {
  private file: FileHandle | undefined;
  private offset = 0;
  private partial = '';
  private readonly decoder = new StringDecoder('utf8');
  private timer: NodeJS.Timeout | undefined;
  private readonly byNamespace = new Map<string, TimedEvent[]>();
  private readonly watched = new Set<string>();
  private reading: Promise<void> = Promise.resolve();
  private readonly gone = new Map<string, number>();
  /** Operator writes to a namespace more than `graceMs` after it was gone (invariant 4: it is forgotten). */
  readonly lateWrites: TimedEvent[] = [];
  lines = 0;
  bytes = 0;

  constructor(
    private readonly path: string,
    private readonly operatorUser: string,
    private readonly graceMs = 10_000,
  ) {}

  /** The namespace was seen gone at `at`; from `at + graceMs` on, any operator write to it is recorded. */
  markGone(namespace: string, at: number): void {
    this.gone.set(namespace, at);
  }

  async start(): Promise<void> {
    this.file = await open(this.path, 'r');
    this.timer = setInterval(() => void this.poll(), 250);
  }

  /** Keep the events of `namespace` from now on (others are parsed and dropped). */
  watch(namespace: string): void {
    this.watched.add(namespace);
  }

  /** Reads what the API server has written so far; resolves once it is in. */
  poll(): Promise<void> {
    this.reading = this.reading.then(() => this.readMore());
    return this.reading;
  }

  /** The events of `namespace` so far, and stops keeping them. */
  async take(namespace: string): Promise<TimedEvent[]> {
    await this.poll();
    const events = this.byNamespace.get(namespace) ?? [];
    this.byNamespace.delete(namespace);
    this.watched.delete(namespace);
    return events;
  }

  /** Events of a namespace that is no longer watched would be dropped; peek without taking. */
  peek(namespace: string): readonly TimedEvent[] {
    return this.byNamespace.get(namespace) ?? [];
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.reading;
    await this.file?.close();
  }

  private async readMore(): Promise<void> {
    if (!this.file) return;
    const chunk = Buffer.alloc(1 << 20);
    for (;;) {
      const { bytesRead } = await this.file.read(chunk, 0, chunk.length, this.offset);
      if (bytesRead === 0) return;
      this.offset += bytesRead;
      this.bytes += bytesRead;
      const text = this.partial + this.decoder.write(chunk.subarray(0, bytesRead));
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) this.accept(line);
    }
  }

  private accept(line: string): void {
    if (line.trim() === '') return;
    this.lines++;
    const event = JSON.parse(line) as AuditEvent;
    const namespace = namespaceOf(event);
    if (namespace === undefined) return;
    const goneAt = this.gone.get(namespace);
    if (goneAt !== undefined && event.user.username === this.operatorUser) {
      const late = timed(event);
      if (late.completed > goneAt + this.graceMs) this.lateWrites.push(late);
    }
    if (!this.watched.has(namespace)) return;
    const list = this.byNamespace.get(namespace) ?? [];
    list.push(timed(event));
    this.byNamespace.set(namespace, list);
  }
}
