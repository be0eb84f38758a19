/**
 * EventRecorder writing core/v1 Events (what `kubectl describe` shows), as plain JSON (no generated-model walk).
 * Each POST goes on its own, the caller does not wait for it; failures are logged, not thrown.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { KubeRequestError, request } from '../../kube/errors.ts';
import { segment } from '../../kube/plain-json.ts';
import type { EventRecorder } from '../ports.ts';
import type { KubeClients } from '../../kube/clients.ts';
import { rfc3339 } from '../conditions.ts';

export function kubeEventRecorder({ json }: KubeClients, component: string, log: Logger): EventRecorder {
  return {
    record(target, type, reason, message) {
      void post(target, type, reason, message);
    },
  };

  async function post(...[target, type, reason, message]: Parameters<EventRecorder['record']>) {
    const now = rfc3339(new Date());
    try {
      await request('RecordEvent', `${target.kind} ${target.namespace}/${target.name}`, () =>
        json({
          method: 'POST',
          path: `/api/v1/namespaces/${segment(target.namespace)}/events`,
          body: {
            metadata: {
              name: `${target.name}.${randomBytes(8).toString('hex')}`,
              namespace: target.namespace,
            },
            involvedObject: {
              kind: target.kind,
              apiVersion: target.apiVersion,
              namespace: target.namespace,
              name: target.name,
              ...(target.uid ? { uid: target.uid } : {}),
            },
            type,
            reason,
            message: message.slice(0, 1024),
            source: { component },
            reportingComponent: component,
            reportingInstance: component,
            firstTimestamp: now,
            lastTimestamp: now,
            count: 1,
          },
        }),
      );
    } catch (error) {
      const fields = { reason, target: `${target.namespace}/${target.name}` };
      // A namespace being deleted refuses new Events by design: nothing for a person to act on.
      if (error instanceof KubeRequestError && error.namespaceTerminating)
        log.debug(fields, 'event not recorded: its namespace is being deleted');
      else log.warn({ ...fields, err: error }, 'could not record event');
    }
  }
}
