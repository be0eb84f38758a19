/**
 * The conformance driver for the TypeScript client (test/conformance/protocol.md): JSON lines on stdin,
 * answers on stdout, one request at a time. It translates and decides nothing.
 *
 *   node --import tsx test/conformance/drivers/typescript.ts --kubeconfig PATH
 */
import { createInterface } from 'node:readline';
import {
  CompletionReports,
  KubeConfig,
  KubeRequestError,
  SandboxDeletingError,
  SandboxClaimNotReadyError,
  SandboxClaims,
  SandboxNotReadyError,
  SandboxResumeForbiddenError,
  SessionReferenceConflictError,
  SessionReferences,
  type AttachRequest,
  type ClaimRequest,
  type ReportOutcome,
  type ReportRequest,
  type TurnRecord,
} from '../../../operator/client/index.ts';

type Request = { id: number; op: string; args: Record<string, unknown>; kubeconfig?: string };
type Clients = { references: SessionReferences; reports: CompletionReports; claims: SandboxClaims };

const flag = process.argv.indexOf('--kubeconfig');
const defaultKubeconfig = flag === -1 ? undefined : process.argv[flag + 1];
if (defaultKubeconfig === undefined) throw new Error('usage: typescript.ts --kubeconfig PATH');

const clients = new Map<string, Clients>();
function clientsFor(path: string): Clients {
  let found = clients.get(path);
  if (found === undefined) {
    const config = new KubeConfig();
    config.loadFromFile(path);
    found = {
      references: new SessionReferences(config),
      reports: new CompletionReports(config),
      claims: new SandboxClaims(config),
    };
    clients.set(path, found);
  }
  return found;
}

const write = (answer: object) => process.stdout.write(`${JSON.stringify(answer)}\n`);
const str = (args: Record<string, unknown>, name: string) => String(args[name]);

function errorOf(error: unknown): object {
  if (error instanceof SandboxDeletingError)
    return {
      kind: 'SandboxDeleting',
      reason: error.reason,
      since: error.since ?? null,
      withdrawal: error.withdrawal,
      message: error.message,
    };
  if (error instanceof SessionReferenceConflictError)
    return {
      kind: 'SessionReferenceConflict',
      name: error.reference,
      field: error.field,
      requested: error.requested,
      found: error.found,
      message: error.message,
    };
  if (error instanceof SandboxNotReadyError)
    return { kind: error.kind, reason: error.reason, seen: error.seen, message: error.message };
  if (error instanceof SandboxClaimNotReadyError)
    return { kind: error.kind, reason: error.reason, seen: error.seen, message: error.message };
  if (error instanceof SandboxResumeForbiddenError) return { kind: error.kind, message: error.message };
  if (error instanceof KubeRequestError)
    return {
      kind: 'KubeRequestFailed',
      step: error.step,
      target: error.target,
      status: error.status ?? null,
      message: error.message,
    };
  return { kind: 'Other', message: error instanceof Error ? error.message : String(error) };
}

const outcomeOf = (outcome: ReportOutcome) =>
  outcome.kind === 'Reported'
    ? { kind: outcome.kind, reason: outcome.report.reason, key: outcome.report.key }
    : outcome;

async function perform(
  id: number,
  op: string,
  args: Record<string, unknown>,
  { references, reports, claims }: Clients,
) {
  const ns = str(args, 'namespace');
  switch (op) {
    case 'attach': {
      // Options beside the request: `resume` (default true) and `waitReadyMs` (no wait when absent).
      const { resume, waitReadyMs, ...request } = args;
      return references.attach(request as unknown as AttachRequest, {
        ...(resume === false ? { resume: false } : {}),
        ...(typeof waitReadyMs === 'number' ? { waitReady: { deadlineMs: waitReadyMs, pollMs: 200 } } : {}),
      });
    }
    case 'claim': {
      const { deadlineMs, ...request } = args;
      return claims.claim(request as unknown as ClaimRequest, { deadlineMs: Number(deadlineMs) });
    }
    case 'releaseClaim':
      return claims.release(ns, str(args, 'claim'));
    case 'detach':
      return references.detach(ns, str(args, 'sandbox'), str(args, 'session')).then(() => null);
    case 'forget': {
      const result = await references.forget(
        ns,
        str(args, 'sandbox'),
        str(args, 'session'),
        Number(args['deadlineMs']),
      );
      return result.kind === 'Failed' ? { kind: 'Failed', error: errorOf(result.error) } : result;
    }
    case 'pruneWorktree':
      return references.pruneWorktree(ns, str(args, 'worktree'));
    case 'recordTurn':
      return reports.recordTurn(ns, str(args, 'reference'), args['turn'] as TurnRecord).then(() => null);
    case 'reportOnce': {
      const delivered: object[] = [];
      const outcome = await reports.reportOnce(args as unknown as ReportRequest, (reported) => {
        delivered.push({ reason: reported.report.reason, key: reported.report.key });
        if (args['deliver'] === 'fail') return Promise.reject(new Error('the delivery failed'));
        if (args['deliver'] === 'crash') {
          write({ id, crashed: true, delivered });
          process.exit(75);
        }
        return Promise.resolve();
      });
      return { outcome: outcomeOf(outcome), delivered };
    }
    default:
      throw new Error(`unknown op ${op}`);
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === '') continue;
  const { id, op, args, kubeconfig } = JSON.parse(line) as Request;
  try {
    const value: unknown = await perform(id, op, args, clientsFor(kubeconfig ?? defaultKubeconfig));
    write({ id, ok: true, value });
  } catch (error) {
    write({ id, ok: false, error: errorOf(error) });
  }
}
// Stdin closed: the host stops, as a restart does, without waiting for pooled connections or held requests.
process.exit(0);
