/**
 * Answers one `kubectl sandbox` command from the ports: starts every read it needs at once (each is a
 * kubectl process; together they take as long as the slowest), builds the view, renders it. A missing or
 * malformed object is a PluginError that names it; it wins over a failure of the other reads.
 */
import { SANDBOX, SESSION_REFERENCE } from '../../api/names.ts';
import type { Parsed } from '../../api/parse.ts';
import type { OutputFormat, PluginCommand, Scope } from './args.ts';
import { deletionView } from './deletion-view.ts';
import { notFound, PluginError } from './errors.ts';
import { renderDeletion, renderReferences, renderShells } from './format.ts';
import { renderDeletionList, renderReferenceList } from './list-format.ts';
import { deletionRows, referenceListRows } from './list-views.ts';
import { render } from './output.ts';
import type { PluginPorts } from './ports.ts';
import { referencesView } from './references-view.ts';
import { shellsView } from './shells-view.ts';
import { claimRows, poolRows, renderClaimList, renderPoolList } from './warm-pool-views.ts';

/**
 * Reads started together: `first` is awaited and checked before the others, so a missing object is
 * reported even when a read beside it failed; the others' rejections are never left unhandled.
 */
function together<R extends readonly unknown[]>(others: { [K in keyof R]: Promise<R[K]> }) {
  const settled = Promise.allSettled(others);
  return {
    async first<F>(first: Promise<F>): Promise<F> {
      return first.catch(async (error: unknown) => {
        await settled;
        throw error;
      });
    },
    async rest(): Promise<R> {
      const results = await settled;
      const rejected = results.find((result) => result.status === 'rejected');
      if (rejected) throw rejected.reason;
      return results.map((result) => (result as PromiseFulfilledResult<unknown>).value) as unknown as R;
    },
  };
}

export async function runCommand(
  command: PluginCommand,
  scope: Scope,
  output: OutputFormat,
  ports: PluginPorts,
  now: Date,
): Promise<string> {
  const { objects, lists, events } = ports;
  const namespace = scope.allNamespaces ? undefined : scope.namespace;
  async function required<T>(parsed: Parsed<T> | undefined, kind: string, name: string): Promise<T> {
    if (parsed === undefined) throw notFound(kind, namespace ?? (await lists.defaultNamespace()), name);
    if (!parsed.ok) throw new PluginError('Malformed', parsed.error.message, { cause: parsed.error });
    return parsed.value;
  }
  switch (command.kind) {
    case 'refs': {
      const reads = together([objects.references(namespace, command.sandbox)] as const);
      const sandbox = await required(
        await reads.first(objects.sandbox(namespace, command.sandbox)),
        SANDBOX.kind,
        command.sandbox,
      );
      const [references] = await reads.rest();
      const view = referencesView(sandbox, references, { foreignOnly: command.foreignOnly });
      return render(output, 'SandboxReferences', view, renderReferences);
    }
    case 'why': {
      const reads = together([
        objects.references(namespace, command.sandbox),
        objects.pods(namespace, command.sandbox),
        events.events(namespace, SANDBOX.kind, command.sandbox),
      ] as const);
      const sandbox = await required(
        await reads.first(objects.sandbox(namespace, command.sandbox)),
        SANDBOX.kind,
        command.sandbox,
      );
      const [references, pods, recent] = await reads.rest();
      const view = deletionView(sandbox, references, pods, recent);
      return render(output, 'SandboxDeletion', view, (printable) => renderDeletion(printable, now));
    }
    case 'shells': {
      const reads = together([events.events(namespace, SESSION_REFERENCE.kind, command.reference)] as const);
      const reference = await required(
        await reads.first(objects.reference(namespace, command.reference)),
        SESSION_REFERENCE.kind,
        command.reference,
      );
      const [recent] = await reads.rest();
      const sandbox = await objects.sandbox(reference.metadata.namespace, reference.spec.sandbox);
      const view = shellsView(reference, sandbox?.ok === true ? sandbox.value : undefined, recent);
      return render(output, 'SessionShells', view, (printable) => renderShells(printable, now));
    }
    case 'why-list': {
      const rows = deletionRows(await lists.sandboxes(scope));
      return render(output, 'SandboxDeletionList', rows, (printable) =>
        renderDeletionList(printable, scope.allNamespaces, now),
      );
    }
    case 'refs-list': {
      const [references, sandboxes] = await Promise.all([lists.references(scope), lists.sandboxes(scope)]);
      const rows = referenceListRows(references, sandboxes, { foreignOnly: command.foreignOnly });
      return render(output, 'SessionReferenceList', rows, (printable) =>
        renderReferenceList(printable, scope.allNamespaces),
      );
    }
    case 'claims-list': {
      const rows = claimRows(await lists.sandboxClaims(scope));
      return render(output, 'SandboxClaimList', rows, (printable) =>
        renderClaimList(printable, scope.allNamespaces, now),
      );
    }
    case 'pools-list': {
      const rows = poolRows(await lists.warmPools(scope));
      return render(output, 'SandboxWarmPoolList', rows, (printable) =>
        renderPoolList(printable, scope.allNamespaces, now),
      );
    }
  }
}
