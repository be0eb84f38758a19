/**
 * A supervised list+watch of one resource, feeding a sink (the store's writer).
 *
 * The client-node informer stops for good on errors other than 410 and swallows handler exceptions, so this
 * loop owns recovery: paginated LIST (a consistent read) → WATCH from its resourceVersion with bookmarks →
 * on a clean close or an inactivity timeout, WATCH again from the last version; on 410 Gone, LIST again;
 * on any other error, back off (0.8 s → 30 s, with jitter) and LIST again; a 403 is said once with its fix
 * (then at debug) and once more when it clears. Handlers never throw: a failing sink call is logged and the
 * loop goes on.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { sleep } from './sleep.ts';
import { KubeRequestError, request } from '../kube/errors.ts';
import { listPage } from '../kube/list-pages.ts';
import { watchStream, type WatchEnd } from '../kube/watch-stream.ts';
import { forbiddenMisconfiguration, type Misconfiguration } from './forbidden.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

type SinkCalls<T> = {
  /** The full set after a LIST; objects absent from it are gone. */
  replace(items: readonly T[]): void;
  apply(type: WatchEventType, object: T): void;
};
/**
 * Where a watcher delivers. `decode`, called on each object as it arrives (each LIST item as its page comes,
 * each event), is what the sink keeps of it, so a LIST's raw pages are not all held until the last one; a sink
 * of anything but raw objects must have one. Without it the sink gets the objects as the API server sent them.
 */
export type WatchSink<T = unknown> = SinkCalls<T> &
  (unknown extends T ? { decode?(raw: unknown): T } : { decode(raw: unknown): T });

function decoderOf<T>(sink: WatchSink<T>): (raw: unknown) => T {
  const { decode } = sink as { decode?: (raw: unknown) => T };
  return decode ? (raw) => decode.call(sink, raw) : (raw) => raw as T;
}

export type WatchedResource = {
  readonly name: string;
  readonly apiVersion: string;
  readonly kind: string;
  /** The collection path for watches, e.g. /apis/sandbox.agents.dev/v1alpha1/sandboxes. */
  readonly path: string;
  readonly namespace?: string;
  readonly labelSelector?: string;
  /** A field selector the resource's CRD declares selectable (e.g. `spec.sandbox=<name>`). */
  readonly fieldSelector?: string;
};

export type WatcherObserver = {
  /** The loop restarts: 'gone' after a 410, 'error' after any other failure (then `error` says which). */
  readonly onRestart?: (resource: string, reason: 'gone' | 'error', error?: unknown) => void;
};

const PAGE_SIZE = 500;
const WATCH_TIMEOUT_SECONDS = 300; // the server ends each watch by then; bookmarks keep the version fresh

export class Watcher<T = unknown> {
  private resourceVersion = '';
  private syncedOnce = false;
  private syncing = false;
  private readonly synced: Promise<void>;
  private readonly decode: (raw: unknown) => T;
  private markSynced: () => void = () => undefined;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly resource: WatchedResource,
    private readonly sink: WatchSink<T>,
    private readonly log: Logger,
    private readonly observer: WatcherObserver = {},
  ) {
    this.synced = new Promise((resolve) => (this.markSynced = resolve));
    this.decode = decoderOf(sink);
  }

  /** Resolves after the first complete LIST reached the sink. */
  hasSynced(): Promise<void> {
    return this.synced;
  }

  /** False from a failed list or watch until the next complete list: the cache is then not syncing. */
  get isSynced(): boolean {
    return this.syncedOnce && this.syncing;
  }

  get resourceName(): string {
    return this.resource.name;
  }

  /** Runs until `signal` aborts. Never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    let refused = false;
    while (!signal.aborted) {
      try {
        await this.list();
        failures = 0;
        if (refused) {
          refused = false;
          this.log.info(
            { resource: this.resource.name },
            `list/watch of ${this.resource.name} allowed again`,
          );
        }
        while (!isAborted(signal)) {
          const end = await this.watchOnce(signal);
          if (end.kind === 'Closed') continue;
          if (end.kind === 'Gone') {
            this.observer.onRestart?.(this.resource.name, 'gone');
            this.log.info({ resource: this.resource.name }, 'watch expired (410 Gone); listing again');
            break;
          }
          throw new KubeRequestError('Watch', this.resource.name, end.status, { cause: end.error });
        }
      } catch (error) {
        if (isAborted(signal)) return;
        this.syncing = false;
        failures += 1;
        const delay = Math.min(30_000, 800 * 2 ** (failures - 1)) * (0.8 + Math.random() * 0.4);
        this.observer.onRestart?.(this.resource.name, 'error', error);
        const misconfiguration = misconfigurationOf(error, this.resource);
        if (misconfiguration === undefined) {
          this.log.warn(
            { err: error, resource: this.resource.name, retryInMs: Math.round(delay) },
            'list/watch failed; restarting',
          );
        } else if (!refused) {
          // A permission only a person can grant: said once, with the fix; looked at again at the backoff's pace.
          refused = true;
          this.log.error(
            { err: error, resource: this.resource.name, ...misconfiguration, retryInMs: Math.round(delay) },
            `list/watch of ${this.resource.name} refused by a setting only a person can change; the cache is not synced until it is`,
          );
        } else {
          this.log.debug(
            { resource: this.resource.name, retryInMs: Math.round(delay) },
            `list/watch of ${this.resource.name} still refused`,
          );
        }
        await sleep(delay, signal);
      }
    }
  }

  private async list(): Promise<void> {
    const { name, path, labelSelector, fieldSelector } = this.resource;
    const items: T[] = [];
    let continueToken: string | undefined;
    let resourceVersion = '';
    do {
      const page = await request('List', name, () =>
        listPage(this.kubeConfig, path, {
          labelSelector,
          fieldSelector,
          limit: PAGE_SIZE,
          continue: continueToken,
        }),
      );
      for (const item of page.items) items.push(this.decode(item));
      continueToken = page.continueToken;
      resourceVersion = page.resourceVersion || resourceVersion;
    } while (continueToken);
    this.resourceVersion = resourceVersion;
    this.deliver(() => this.sink.replace(items));
    this.syncing = true;
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      this.markSynced();
    }
  }

  private async watchOnce(signal: AbortSignal): Promise<WatchEnd> {
    const query = {
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: WATCH_TIMEOUT_SECONDS,
      labelSelector: this.resource.labelSelector,
      fieldSelector: this.resource.fieldSelector,
    };
    return watchStream(this.kubeConfig, this.resource.path, query, signal, (type, object) => {
      this.noteVersion(object);
      if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED')
        this.deliver(() => this.sink.apply(type, this.decode(object)));
    });
  }

  private noteVersion(object: unknown): void {
    const version = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata
      ?.resourceVersion;
    if (typeof version === 'string' && version !== '') this.resourceVersion = version;
  }

  /** Keeps handlers total: a sink failure is logged, never thrown into the watch stream. */
  private deliver(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.log.error(
        { err: error, resource: this.resource.name },
        'store update failed; the next relist repairs it',
      );
    }
  }
}

/** Read through a call: the signal flips while we await, which flow analysis cannot see. */
const isAborted = (signal: AbortSignal) => signal.aborted;

/**
 * A 403 (RBAC, an admission policy), or a 404 of the collection (no CustomResourceDefinition serves it):
 * retrying alone never lists; a person must change a setting.
 */
function misconfigurationOf(error: unknown, resource: WatchedResource): Misconfiguration | undefined {
  if (!(error instanceof KubeRequestError)) return undefined;
  if (error.status === 403) return forbiddenMisconfiguration(error);
  if (error.status !== 404 || error.step !== 'List') return undefined;
  return {
    reason: 'ResourceNotServed',
    refused: `the API server serves no ${resource.kind} (${resource.apiVersion}, ${resource.name})`,
    fix:
      `install its CustomResourceDefinition (kubectl apply -f crds/ of the release; helm upgrade does not ` +
      `install CRDs a release added, nor change them)`,
  };
}
