/**
 * Watches the SessionReferences of this sandbox only (fieldSelector `spec.sandbox=<name>`; the CRD declares
 * it a selectable field) and reports each ended turn the agent host wrote: `status.endedTurns` (oldest
 * first) and `status.turn`, so a turn overwritten between two reads (a watch gap, a relist, a sidecar
 * restart) is still reported. It also answers what a reference says (role, ended turns) to the socket's
 * turn-authority check. The watch is the operator's own supervised list+watch (operator/runtime/watcher.ts:
 * relist on 410, backoff on any other error, handlers total), so the sidecar has no recovery of its own.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { API_VERSION, GROUP, SESSION_REFERENCE, VERSION } from '../../../api/names.ts';
import { parseSessionReference } from '../../../api/parse.ts';
import { Watcher } from '../../../runtime/watcher.ts';
import { endedTurnsOf, TurnHistory } from '../turns/turn-history.ts';
import type { ReferenceFacts } from '../turns/turn-authority.ts';
import type { TurnEndReceiver } from './ports.ts';

export interface ReferenceKey {
  readonly name: string;
  readonly uid?: string;
}

export interface ReferenceWatchOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly sandbox: string;
  readonly logger: Logger;
  /** Receives each (session, turn, phase) seen, and the turns a full history settles, as they are seen. */
  readonly turns: TurnEndReceiver;
}

export interface ReferenceWatch {
  /** The SessionReference of a session in this sandbox, for status and Events. */
  referenceOf(session: string): ReferenceKey | undefined;
  /** What that reference says: its role and the turns it shows ended. */
  factsOf(session: string): ReferenceFacts | undefined;
  stop(): Promise<void>;
}

export async function startReferenceWatch(options: ReferenceWatchOptions): Promise<ReferenceWatch> {
  const { kubeConfig, namespace, sandbox, logger, turns } = options;
  const log = logger.child({ watch: SESSION_REFERENCE.plural, sandbox });
  const references = new Map<string, ReferenceKey>();
  const facts = new Map<string, ReferenceFacts>();
  const history = new TurnHistory();

  const observe = (raw: unknown): string | undefined => {
    const parsed = parseSessionReference(raw);
    if (!parsed.ok) {
      log.warn({ err: parsed.error, field: parsed.error.field }, 'ignoring a malformed SessionReference');
      return undefined;
    }
    const { metadata, spec, status } = parsed.value;
    if (spec.sandbox !== sandbox) return undefined;
    references.set(
      spec.session,
      metadata.uid === undefined ? { name: metadata.name } : { name: metadata.name, uid: metadata.uid },
    );
    facts.set(spec.session, {
      reference: metadata.name,
      role: spec.role,
      ended: new Map(endedTurnsOf(status).map((t) => [t.id, t.phase])),
    });
    const observed = history.observe(spec.session, status);
    // Settled first: queued on the reaper's lock before this status's turn ends (TurnEndReceiver).
    if (observed.full !== undefined) {
      turns.settleUnshownTurns(spec.session, spec.role, observed.full.shown).catch((error: unknown) => {
        log.error(
          { err: error, session: spec.session },
          'could not settle turns the full history no longer shows',
        );
      });
    }
    for (const turn of observed.ended) {
      const { latest } = turn;
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
      const request = {
        session: spec.session,
        turn: turn.id,
        phase: turn.phase,
        role: spec.role,
        origin: status?.turn !== undefined && latest ? status.turn.origin : 'Unknown',
      };
      turns.endTurn(request).catch((error: unknown) => {
        log.error(
          { err: error, session: spec.session, turn: turn.id },
          'turn end from the SessionReference failed; the next event retries',
        );
      });
    }
    return spec.session;
  };
  const forget = (raw: unknown): void => {
    const parsed = parseSessionReference(raw);
    if (!parsed.ok) return;
    references.delete(parsed.value.spec.session);
    facts.delete(parsed.value.spec.session);
    history.forget(parsed.value.spec.session);
  };

  const watcher = new Watcher(
    kubeConfig,
    {
      name: SESSION_REFERENCE.plural,
      apiVersion: API_VERSION,
      kind: SESSION_REFERENCE.kind,
      path: `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${SESSION_REFERENCE.plural}`,
      namespace,
      fieldSelector: `spec.sandbox=${sandbox}`,
    },
    {
      // A relist is the whole set: sessions absent from it are gone.
      replace: (items) => {
        references.clear();
        facts.clear();
        const listed = items.flatMap((item) => observe(item) ?? []);
        history.keepOnly(listed);
      },
      apply: (type, object) => {
        if (type === 'DELETED') forget(object);
        else observe(object);
      },
    },
    log,
    // As before the shared watcher: a first list that fails fails the start (a missing RBAC rule is said at
    // once); after it, failures are the watcher's to recover from.
    { onRestart: (_resource, _reason, error) => firstFailure(error) },
  );
  let firstFailure: (error: unknown) => void = () => undefined;
  const failed = new Promise<never>((_resolve, reject) => {
    firstFailure = (error) =>
      reject(new Error('the SessionReference watch could not list', { cause: error }));
  });
  const stopping = new AbortController();
  const running = watcher.run(stopping.signal);
  try {
    await Promise.race([watcher.hasSynced(), failed]);
  } catch (error) {
    stopping.abort();
    await running;
    throw error;
  } finally {
    firstFailure = () => undefined;
  }
  return {
    referenceOf(session) {
      return references.get(session);
    },
    factsOf(session) {
      return facts.get(session);
    },
    async stop() {
      stopping.abort();
      await running;
    },
  };
}
