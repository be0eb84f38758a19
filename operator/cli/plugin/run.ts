/**
 * Answers one `kubectl sandbox` command from the ports: reads, builds the view, renders it as text or JSON.
 * A missing or malformed object is a PluginError that names it.
 */
import { SANDBOX, SESSION_REFERENCE } from '../../api/names.ts';
import type { Parsed } from '../../api/parse.ts';
import type { OutputFormat, PluginCommand } from './args.ts';
import { deletionView } from './deletion-view.ts';
import { notFound, PluginError } from './errors.ts';
import { renderDeletion, renderReferences, renderShells } from './format.ts';
import type { PluginPorts } from './ports.ts';
import { referencesView } from './references-view.ts';
import { shellsView } from './shells-view.ts';

function required<T>(parsed: Parsed<T> | undefined, kind: string, namespace: string, name: string): T {
  if (parsed === undefined) throw notFound(kind, namespace, name);
  if (!parsed.ok) throw new PluginError('Malformed', parsed.error.message, { cause: parsed.error });
  return parsed.value;
}

export async function runCommand(
  command: PluginCommand,
  namespace: string,
  output: OutputFormat,
  ports: PluginPorts,
  now: Date,
): Promise<string> {
  const { objects, events } = ports;
  const render = <T>(view: T, text: (view: T) => string) =>
    output === 'json' ? `${JSON.stringify(view, null, 2)}\n` : text(view);
  const sandboxNamed = async (name: string) =>
    required(await objects.sandbox(namespace, name), SANDBOX.kind, namespace, name);
  switch (command.kind) {
    case 'refs': {
      const sandbox = await sandboxNamed(command.sandbox);
      const references = await objects.references(namespace, command.sandbox);
      return render(
        referencesView(sandbox, references, { foreignOnly: command.foreignOnly }),
        renderReferences,
      );
    }
    case 'why': {
      const sandbox = await sandboxNamed(command.sandbox);
      const [references, pods, recent] = await Promise.all([
        objects.references(namespace, command.sandbox),
        objects.pods(namespace, command.sandbox),
        events.events(namespace, SANDBOX.kind, command.sandbox),
      ]);
      return render(deletionView(sandbox, references, pods, recent), (view) => renderDeletion(view, now));
    }
    case 'shells': {
      const reference = required(
        await objects.reference(namespace, command.reference),
        SESSION_REFERENCE.kind,
        namespace,
        command.reference,
      );
      const [sandbox, recent] = await Promise.all([
        objects.sandbox(namespace, reference.spec.sandbox),
        events.events(namespace, SESSION_REFERENCE.kind, command.reference),
      ]);
      const parsedSandbox = sandbox?.ok === true ? sandbox.value : undefined;
      return render(shellsView(reference, parsedSandbox, recent), (view) => renderShells(view, now));
    }
  }
}
