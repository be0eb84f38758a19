/**
 * Records a retire on the session's SessionReference: `status.shells` by a JSON merge patch on the status
 * subresource (the sidecar owns that field; the agent host owns `status.turn`), and an Event. A failure is
 * returned to the reaper, which logs it: reporting never blocks the turn's answer. Both requests are plain
 * JSON through operator/kube's client, as the controller's (docs/adr/0006-plain-json-kubernetes-io.md).
 */
import { PatchStrategy, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { API_VERSION, GROUP, SESSION_REFERENCE, VERSION } from '../../../api/names.ts';
import type { ShellsStatus } from '../../../api/session-reference.ts';
import { jsonClientFor } from '../../../kube/clients.ts';
import { request } from '../../../kube/errors.ts';
import { segment } from '../../../kube/plain-json.ts';
import { SidecarError } from '../../contract/errors.ts';
import type { ReferenceKey } from './reference-watch.ts';
import type { RetireFailure, RetireReport, RetireReporter } from './ports.ts';

export const EVENT_REASONS = {
  ShellsRetired: 'the completed subagent turn’s shell groups were retired',
  ShellsUnreachable: 'some of the turn’s processes could not be ended',
  ShellRetireFailed: 'retiring the turn’s shells failed; it is retried from the journal',
} as const;
export type EventReason = keyof typeof EVENT_REASONS;

export interface KubeReporterOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly podName: string | undefined;
  readonly logger: Logger;
  readonly referenceOf: (session: string) => ReferenceKey | undefined;
}

const MESSAGE_MAX = 1024;

/** The status the sidecar writes for a finished retire (pure, so it is unit-tested). */
export function shellsStatusOf(report: RetireReport): ShellsStatus {
  return {
    retiredTurn: report.turn,
    retiredGroups: report.summary.retiredGroups,
    unreachable: report.summary.unreachable,
    retiredAt: report.finishedAt,
    message: report.summary.message.slice(0, MESSAGE_MAX),
  };
}

export const SHELL_REAPER_USER_AGENT = 'sandbox-operator-shell-reaper';

export function createKubeReporter(options: KubeReporterOptions): RetireReporter {
  const { kubeConfig, namespace, podName, logger } = options;
  // The shell reaper names itself: its writes are not the operator's (audit logs, the API server's metrics).
  const json = jsonClientFor(kubeConfig, { userAgent: SHELL_REAPER_USER_AGENT });
  const references = `/apis/${GROUP}/${VERSION}/namespaces/${segment(namespace)}/${SESSION_REFERENCE.plural}`;

  const event = async (
    ref: ReferenceKey,
    type: 'Normal' | 'Warning',
    reason: EventReason,
    message: string,
  ) => {
    // As the generated client wrote them: ISO timestamps with milliseconds.
    const now = new Date().toISOString();
    const body = {
      metadata: { generateName: `${ref.name}.`, namespace },
      involvedObject: {
        apiVersion: API_VERSION,
        kind: SESSION_REFERENCE.kind,
        name: ref.name,
        namespace,
        ...(ref.uid === undefined ? {} : { uid: ref.uid }),
      },
      reason,
      message: message.slice(0, MESSAGE_MAX),
      type,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: 'shell-reaper', ...(podName === undefined ? {} : { host: podName }) },
      reportingComponent: `${GROUP}/shell-reaper`,
      reportingInstance: podName ?? 'shell-reaper',
    };
    try {
      await request('RecordEvent', `${SESSION_REFERENCE.kind} ${namespace}/${ref.name}`, () =>
        json({ method: 'POST', path: `/api/v1/namespaces/${segment(namespace)}/events`, body }),
      );
    } catch (error) {
      throw new SidecarError('EventFailed', `${reason} on ${ref.name}`, { cause: error });
    }
  };

  return {
    async reportRetired(report: RetireReport) {
      const ref = options.referenceOf(report.session);
      if (ref === undefined) {
        logger.info(
          { session: report.session, turn: report.turn },
          'no SessionReference of this sandbox names the session; status not written',
        );
        return;
      }
      let patchError: SidecarError | undefined;
      try {
        await request('PatchStatus', `${SESSION_REFERENCE.kind} ${namespace}/${ref.name}`, () =>
          json({
            method: 'PATCH',
            path: `${references}/${segment(ref.name)}/status`,
            body: { status: { shells: shellsStatusOf(report) } },
            contentType: PatchStrategy.MergePatch,
          }),
        );
      } catch (error) {
        patchError = new SidecarError('StatusPatchFailed', ref.name, { cause: error });
      }
      const unreachable = report.summary.unreachable > 0;
      // The Event is written even when the patch failed, so the retire is visible somewhere.
      await event(
        ref,
        unreachable ? 'Warning' : 'Normal',
        unreachable ? 'ShellsUnreachable' : 'ShellsRetired',
        `turn ${report.turn}: ${report.summary.message}`,
      );
      if (patchError !== undefined) throw patchError;
    },
    async reportFailure(failure: RetireFailure) {
      const ref = options.referenceOf(failure.session);
      if (ref === undefined) return;
      await event(ref, 'Warning', 'ShellRetireFailed', `turn ${failure.turn}: ${failure.message}`);
    },
  };
}
