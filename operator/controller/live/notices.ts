/**
 * The drain notice on a live sandbox's references (disruption-notice.ts): written when the cache shows a
 * reference that does not carry what the drain plan wants, from a consistent LIST, before any pod moves. A
 * reference changed since that LIST is left to the turn its change brings.
 */
import type { Logger } from 'pino';
import type { SandboxState } from '../../api/objects.ts';
import { keyOf } from '../cache/store.ts';
import type { ReconcilerContext } from '../context.ts';
import { noticeWrite, wantedNotice } from '../disruption-notice.ts';
import type { PlannedDrain } from './drain.ts';

export async function noticeReferences(
  ctx: ReconcilerContext,
  sandbox: SandboxState,
  drain: PlannedDrain,
  state: { readonly suspended: boolean; readonly replacementWaiting: boolean },
  log: Logger,
): Promise<void> {
  const { namespace, name } = sandbox.metadata;
  const wanted = wantedNotice({ plan: drain.plan, holdSeconds: drain.holdSeconds, ...state });
  const cached = ctx.store.referenceNotices(keyOf(namespace, name));
  if (!cached.some((reference) => noticeWrite(wanted, reference.state, reference.notice) !== undefined))
    return;
  const { written, changed } = await ctx.ports.references.noticeDisruption(namespace, name, wanted);
  if (written.length > 0 || changed.length > 0)
    log.info(
      { written, changed, notice: wanted.kind },
      wanted.kind === 'Notice'
        ? 'told the attached sessions that a drain moves the sandbox (status.disruption of their references)'
        : 'the drain is over: removed status.disruption from the references',
    );
}
