/**
 * Watches the SessionReferences of this sandbox only (fieldSelector `spec.sandbox=<name>`; the CRD declares
 * it a selectable field) and reports each ended turn the agent host wrote: `status.endedTurns` (oldest
 * first) and `status.turn`, so a turn overwritten between two reads (a watch gap, a relist, a sidecar
 * restart) is still reported. It also answers what a reference says (role, ended turns) to the socket's
 * turn-authority check. The
 * client-node informer stops for good on errors other than 410, so it is restarted with backoff; handlers
 * are total (a throwing handler would be an unhandled rejection).
 */
import {
  CustomObjectsApi,
  ListWatch,
  Watch,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { GROUP, SESSION_REFERENCE, VERSION } from '../../../api/names.ts';
import { parseSessionReference } from '../../../api/parse.ts';
import type { Role, SessionReferenceStatus, TurnOrigin } from '../../../api/session-reference.ts';
import type { ReferenceFacts } from '../turn-authority.ts';
import type { EndedPhase } from '../turn-decision.ts';

export interface TurnEndSignal {
  readonly reference: string;
  readonly session: string;
  readonly role: Role;
  readonly turn: string;
  readonly phase: EndedPhase;
  readonly origin: TurnOrigin;
}

export interface ReferenceKey {
  readonly name: string;
  readonly uid?: string;
}

export interface ReferenceWatchOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly sandbox: string;
  readonly logger: Logger;
  /** Called once per (session, turn, phase) seen; the reaper makes repeats idempotent anyway. */
  readonly onTurnEnded: (signal: TurnEndSignal) => void;
}

export interface ReferenceWatch {
  /** The SessionReference of a session in this sandbox, for status and Events. */
  referenceOf(session: string): ReferenceKey | undefined;
  /** What that reference says: its role and the turns it shows ended. */
  factsOf(session: string): ReferenceFacts | undefined;
  stop(): Promise<void>;
}

const BACKOFF_MIN_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;

export async function startReferenceWatch(options: ReferenceWatchOptions): Promise<ReferenceWatch> {
  const { kubeConfig, namespace, sandbox, logger } = options;
  const log = logger.child({ watch: SESSION_REFERENCE.plural, sandbox });
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const fieldSelector = `spec.sandbox=${sandbox}`;
  const path = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${SESSION_REFERENCE.plural}`;
  const list = async (): Promise<KubernetesListObject<KubernetesObject>> =>
    (await api.listNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace,
      plural: SESSION_REFERENCE.plural,
      fieldSelector,
    })) as KubernetesListObject<KubernetesObject>;
  const informer = new ListWatch<KubernetesObject>(
    path,
    new Watch(kubeConfig),
    list,
    false,
    undefined,
    fieldSelector,
  );
  const references = new Map<string, ReferenceKey>();
  const facts = new Map<string, ReferenceFacts>();
  const seen = new Set<string>();
  let backoff = BACKOFF_MIN_MS;
  let restart: NodeJS.Timeout | undefined;
  let stopped = false;

  const observe = (raw: KubernetesObject): void => {
    try {
      const parsed = parseSessionReference(raw);
      if (!parsed.ok) {
        log.warn({ err: parsed.error, field: parsed.error.field }, 'ignoring a malformed SessionReference');
        return;
      }
      const { metadata, spec, status } = parsed.value;
      if (spec.sandbox !== sandbox) return;
      references.set(
        spec.session,
        metadata.uid === undefined ? { name: metadata.name } : { name: metadata.name, uid: metadata.uid },
      );
      backoff = BACKOFF_MIN_MS;
      const ended = endedTurnsOf(status);
      facts.set(spec.session, {
        reference: metadata.name,
        role: spec.role,
        ended: new Map(ended.map((t) => [t.id, t.phase])),
      });
      for (const turn of ended) {
        const key = `${spec.session}/${turn.id}/${turn.phase}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const current = status?.turn;
        const latest = current?.id === turn.id;
        log.info(
          {
            reference: metadata.name,
            session: spec.session,
            role: spec.role,
            turn: turn.id,
            phase: turn.phase,
            latest,
          },
          latest ? 'turn end seen on the SessionReference' : 'turn end found in status.endedTurns',
        );
        options.onTurnEnded({
          reference: metadata.name,
          session: spec.session,
          role: spec.role,
          turn: turn.id,
          phase: turn.phase,
          origin: current !== undefined && latest ? current.origin : 'Unknown',
        });
      }
    } catch (error) {
      log.error({ err: error }, 'SessionReference handler failed; the next event retries');
    }
  };
  informer.on('add', observe);
  informer.on('update', observe);
  informer.on('delete', (raw) => {
    const parsed = parseSessionReference(raw);
    if (!parsed.ok) return;
    references.delete(parsed.value.spec.session);
    facts.delete(parsed.value.spec.session);
  });
  informer.on('error', (error: unknown) => {
    if (stopped) return;
    log.warn({ err: error, retryInMs: backoff }, 'SessionReference watch stopped; restarting it');
    clearTimeout(restart);
    restart = setTimeout(() => {
      informer.start().catch((cause: unknown) => {
        log.error({ err: cause }, 'SessionReference watch restart failed');
      });
    }, backoff);
    backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
  });
  await informer.start();
  return {
    referenceOf(session) {
      return references.get(session);
    },
    factsOf(session) {
      return facts.get(session);
    },
    async stop() {
      stopped = true;
      clearTimeout(restart);
      await informer.stop();
    },
  };
}

/** The ended turns a status shows, oldest first: the history, then the latest turn if it ended. */
export function endedTurnsOf(
  status: SessionReferenceStatus | undefined,
): { readonly id: string; readonly phase: EndedPhase }[] {
  const ended = [...(status?.endedTurns ?? [])];
  const latest = status?.turn;
  if (latest !== undefined && latest.phase !== 'Running' && !ended.some((t) => t.id === latest.id))
    ended.push({ id: latest.id, phase: latest.phase });
  return ended;
}
