/**
 * The command line of `kubectl sandbox`: a command, its object, and the flags kubectl users expect
 * (-n/--namespace, --context, --kubeconfig, -o/--output). Pure: a bad command line is a UsageError that
 * says what was wrong and exits 2.
 */
import { parseArgs } from 'node:util';

export type PluginCommand =
  | { readonly kind: 'refs'; readonly sandbox: string; readonly foreignOnly: boolean }
  | { readonly kind: 'why'; readonly sandbox: string }
  | { readonly kind: 'shells'; readonly reference: string };

export type OutputFormat = 'text' | 'json';

export type Invocation =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'run';
      readonly command: PluginCommand;
      readonly namespace: string | undefined;
      readonly context: string | undefined;
      readonly kubeconfig: string | undefined;
      readonly output: OutputFormat;
    };

export const USAGE = `kubectl sandbox: questions about sandboxes and the sessions that share them.

Usage:
  kubectl sandbox refs <sandbox> [--foreign]   the SessionReferences of a sandbox, and which are foreign
                                               to its worktree
  kubectl sandbox why <sandbox>                why its deletion is blocked (or what would block it)
  kubectl sandbox shells <sessionreference>    what the shell reaper retired for that session

Flags:
  -n, --namespace <ns>   namespace (default: the kubeconfig context's, else "default")
      --context <name>   kubeconfig context
      --kubeconfig <path>
  -o, --output text|json
  -h, --help

Exit codes: 0 answered, 1 the object was not found or the API server refused, 2 usage error.
`;

export class UsageError extends Error {
  readonly kind = 'Usage';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'UsageError';
  }
}

const COMMANDS = {
  refs: 'sandbox',
  why: 'sandbox',
  shells: 'sessionreference',
} as const;
type CommandName = keyof typeof COMMANDS;

const isCommand = (word: string): word is CommandName => Object.hasOwn(COMMANDS, word);

export function parseInvocation(argv: readonly string[]): Invocation {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        namespace: { type: 'string', short: 'n' },
        context: { type: 'string' },
        kubeconfig: { type: 'string' },
        output: { type: 'string', short: 'o', default: 'text' },
        foreign: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), { cause: error });
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) return { kind: 'help' };
  const [word = '', name, ...extra] = positionals;
  if (!isCommand(word)) throw new UsageError(`unknown command "${word}": expected refs, why or shells`);
  if (name === undefined || name === '')
    throw new UsageError(`${word} needs the name of a ${COMMANDS[word]}`);
  if (extra.length > 0)
    throw new UsageError(`${word} takes one ${COMMANDS[word]}, got also: ${extra.join(' ')}`);
  if (values.output !== 'text' && values.output !== 'json')
    throw new UsageError(`--output must be text or json, got "${values.output}"`);
  if (values.foreign && word !== 'refs') throw new UsageError('--foreign applies to refs only');
  const command: PluginCommand =
    word === 'refs'
      ? { kind: 'refs', sandbox: name, foreignOnly: values.foreign }
      : word === 'why'
        ? { kind: 'why', sandbox: name }
        : { kind: 'shells', reference: name };
  return {
    kind: 'run',
    command,
    namespace: values.namespace,
    context: values.context,
    kubeconfig: values.kubeconfig,
    output: values.output,
  };
}
