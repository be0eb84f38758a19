/**
 * The command line of `kubectl sandbox`: a command, its object, our flags (-n, -A, -o, --foreign), and
 * kubectl's global flags, which are handed to every `kubectl get` the plugin runs (kubectl passes a plugin
 * only its arguments and environment). Pure: a bad command line is a UsageError that says what was wrong.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export type PluginCommand =
  | { readonly kind: 'refs'; readonly sandbox: string; readonly foreignOnly: boolean }
  | { readonly kind: 'why'; readonly sandbox: string }
  | { readonly kind: 'shells'; readonly reference: string }
  /** `refs` or `why` without a name: one row per object of the namespace, or of all with -A. */
  | { readonly kind: 'refs-list'; readonly foreignOnly: boolean }
  | { readonly kind: 'why-list' }
  | { readonly kind: 'claims-list' }
  | { readonly kind: 'pools-list' };

export type OutputFormat = 'text' | 'json' | 'yaml';

/** undefined namespace: kubectl's own default (the context's namespace, else "default"). */
export type Scope =
  | { readonly allNamespaces: true }
  | { readonly allNamespaces: false; readonly namespace: string | undefined };

export type Invocation =
  | { readonly kind: 'help' }
  | {
      readonly kind: 'run';
      readonly command: PluginCommand;
      readonly scope: Scope;
      readonly output: OutputFormat;
      /** kubectl's global flags as given, `--name=value`, for every kubectl call. */
      readonly kubectlFlags: readonly string[];
    };

export const USAGE = `kubectl sandbox: questions about sandboxes and the sessions that share them.

Usage:
  kubectl sandbox refs <sandbox> [--foreign]   the SessionReferences of a sandbox, and which are foreign
                                               to its worktree
  kubectl sandbox refs [-A] [--foreign]        every SessionReference of the namespace (or of all)
  kubectl sandbox why <sandbox>                why its deletion is blocked (or what would block it)
  kubectl sandbox why [-A]                     where each sandbox's deletion stands
  kubectl sandbox shells <sessionreference>    what the shell reaper retired for that session
  kubectl sandbox claims [-A]                  each SandboxClaim: its pool or template, sandbox, launch
                                               type (Warm or Cold), and what it waits for
  kubectl sandbox pools [-A]                   each SandboxWarmPool: its template, desired and ready sandboxes

Flags:
  -n, --namespace <ns>     namespace (default: the kubeconfig context's, else "default")
  -A, --all-namespaces     every namespace (refs and why without a name, claims, pools)
  -o, --output text|json|yaml
  -h, --help
  kubectl's global flags are passed on to kubectl: --as, --as-group, --as-uid, --context, --cluster,
  --user, --kubeconfig, --server (-s), --request-timeout, --token, --certificate-authority,
  --client-certificate, --client-key, --tls-server-name, --insecure-skip-tls-verify, --cache-dir, -v.

Reads go through the kubectl on PATH with your credentials. Exit codes: 0 answered, 1 the object was not
found or the API server refused, 2 usage error.
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
  claims: undefined,
  pools: undefined,
} as const;
type CommandName = keyof typeof COMMANDS;

const isCommand = (word: string): word is CommandName => Object.hasOwn(COMMANDS, word);

/** kubectl's global flags that take a value (`kubectl options`), passed through unchanged. */
const KUBECTL_VALUE_FLAGS = [
  'as',
  'as-uid',
  'cache-dir',
  'certificate-authority',
  'client-certificate',
  'client-key',
  'cluster',
  'context',
  'kubeconfig',
  'request-timeout',
  'server',
  'tls-server-name',
  'token',
  'user',
  'v',
] as const;
const KUBECTL_BOOLEAN_FLAGS = ['insecure-skip-tls-verify'] as const;

const OPTIONS = {
  namespace: { type: 'string', short: 'n' },
  'all-namespaces': { type: 'boolean', short: 'A', default: false },
  output: { type: 'string', short: 'o', default: 'text' },
  foreign: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  'as-group': { type: 'string', multiple: true },
  ...Object.fromEntries(KUBECTL_VALUE_FLAGS.map((flag) => [flag, { type: 'string' }])),
  ...Object.fromEntries(KUBECTL_BOOLEAN_FLAGS.map((flag) => [flag, { type: 'boolean' }])),
  server: { type: 'string', short: 's' },
} satisfies ParseArgsConfig['options'];

function kubectlFlagsOf(
  values: Record<string, string | boolean | (string | boolean)[] | undefined>,
): string[] {
  const flags: string[] = [];
  for (const flag of KUBECTL_VALUE_FLAGS) {
    const value = values[flag];
    if (typeof value === 'string') flags.push(`--${flag}=${value}`);
  }
  const groups = values['as-group'];
  if (Array.isArray(groups)) for (const group of groups) flags.push(`--as-group=${String(group)}`);
  for (const flag of KUBECTL_BOOLEAN_FLAGS) if (values[flag] === true) flags.push(`--${flag}=true`);
  return flags;
}

/** An object name as the API server accepts it (a DNS subdomain): it goes into label and field selectors. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

function commandOf(
  word: CommandName,
  name: string | undefined,
  foreign: boolean,
  all: boolean,
): PluginCommand {
  if (foreign && word !== 'refs') throw new UsageError('--foreign applies to refs only');
  if (word === 'claims' || word === 'pools') {
    if (name !== undefined)
      throw new UsageError(`${word} lists every one of the namespace (or of all, -A); got a name: ${name}`);
    return { kind: word === 'claims' ? 'claims-list' : 'pools-list' };
  }
  if (name !== undefined && all)
    throw new UsageError(`${word} ${name}: a name cannot be combined with -A/--all-namespaces`);
  if (name === undefined || name === '') {
    if (word === 'refs') return { kind: 'refs-list', foreignOnly: foreign };
    if (word === 'why') return { kind: 'why-list' };
    throw new UsageError(`${word} needs the name of a ${COMMANDS[word]}`);
  }
  if (!OBJECT_NAME.test(name))
    throw new UsageError(
      `${word}: "${name}" is not a ${COMMANDS[word]} name (lowercase letters, digits, "-" and ".", at most 253)`,
    );
  if (word === 'refs') return { kind: 'refs', sandbox: name, foreignOnly: foreign };
  if (word === 'why') return { kind: 'why', sandbox: name };
  return { kind: 'shells', reference: name };
}

export function parseInvocation(argv: readonly string[]): Invocation {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error), { cause: error });
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0) return { kind: 'help' };
  const [word = '', name, ...extra] = positionals;
  if (!isCommand(word))
    throw new UsageError(`unknown command "${word}": expected refs, why, shells, claims or pools`);
  if (extra.length > 0)
    throw new UsageError(`${word} takes one ${COMMANDS[word] ?? 'name'}, got also: ${extra.join(' ')}`);
  const output = values.output;
  if (output !== 'text' && output !== 'json' && output !== 'yaml')
    throw new UsageError(`--output must be text, json or yaml, got "${output}"`);
  const all = values['all-namespaces'];
  if (all && values.namespace !== undefined)
    throw new UsageError('-n/--namespace and -A/--all-namespaces exclude each other');
  return {
    kind: 'run',
    command: commandOf(word, name, values.foreign, all),
    scope: all ? { allNamespaces: true } : { allNamespaces: false, namespace: values.namespace },
    output,
    kubectlFlags: kubectlFlagsOf(values),
  };
}
