/**
 * Lists of more than one page, against the real API server. client-node hands custom resource lists back
 * with the API server's own `continue` field (built-in kinds get `_continue`): reading only one of them
 * truncated the cache and the consistent LIST at 500 references, so a foreign reference on a later page was
 * invisible to the decision.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { API_VERSION, GROUP, SESSION_REFERENCE, VERSION } from '../../../operator/api/names.ts';
import { kubeClients } from '../../../operator/kube/clients.ts';
import { kubeReferenceApi } from '../../../operator/controller/adapters/reference-api.ts';
import { Watcher } from '../../../operator/runtime/watcher.ts';
import { kubeConfig, testNamespace } from '../../harness/kube.ts';
import { createReference } from './fixtures.ts';

const namespace = testNamespace('paging');
const COUNT = 503; // more than one page of 500

describe('a list of more than one page', () => {
  it('is read whole by the consistent LIST and by the watcher', async () => {
    for (let i = 0; i < COUNT; i += 25) {
      await Promise.all(
        Array.from({ length: Math.min(25, COUNT - i) }, (_, j) =>
          createReference(namespace, `page-${String(i + j).padStart(4, '0')}`, {
            sandbox: 'paged',
            session: `workspace_${i + j}`,
            worktree: 'wt-1',
          }),
        ),
      );
    }
    const clients = kubeClients(kubeConfig());
    const live = await kubeReferenceApi(clients).listLive(namespace, 'paged');
    expect(live).toHaveLength(COUNT);

    let listed = -1;
    const watcher = new Watcher(
      clients.config,
      {
        name: SESSION_REFERENCE.plural,
        apiVersion: API_VERSION,
        kind: SESSION_REFERENCE.kind,
        path: `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${SESSION_REFERENCE.plural}`,
        namespace,
      },
      { replace: (items) => (listed = items.length), apply: () => undefined },
      pino({ level: 'silent' }),
    );
    const stop = new AbortController();
    const running = watcher.run(stop.signal);
    await watcher.hasSynced();
    stop.abort();
    await running;
    expect(listed).toBe(COUNT);
  });
});
