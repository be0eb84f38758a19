/**
 * `kubectl sandbox …` (a kubectl plugin; bin/kubectl-sandbox runs this file): which sessions reference a
 * sandbox and which are foreign to its worktree, why its deletion is blocked, what the shell reaper retired
 * for a session. Wiring only: flags → kubeconfig → reads → text. Exit 0 answered, 1 failed, 2 usage.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { parseInvocation, USAGE, UsageError, type Invocation } from './plugin/args.ts';
import { kubeReads } from './plugin/kube-reads.ts';
import { runCommand } from './plugin/run.ts';

function kubeConfigFor(invocation: Extract<Invocation, { kind: 'run' }>): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (invocation.kubeconfig) kubeConfig.loadFromFile(invocation.kubeconfig);
  else kubeConfig.loadFromDefault(); // KUBECONFIG (kubectl passes its environment on), else ~/.kube/config
  if (invocation.context) {
    if (!kubeConfig.getContextObject(invocation.context))
      throw new UsageError(`--context: no context "${invocation.context}" in the kubeconfig`);
    kubeConfig.setCurrentContext(invocation.context);
  }
  return kubeConfig;
}

async function main(argv: readonly string[]): Promise<number> {
  let invocation: Invocation;
  try {
    invocation = parseInvocation(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`error: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (invocation.kind === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  let kubeConfig: KubeConfig;
  try {
    kubeConfig = kubeConfigFor(invocation);
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
  const namespace =
    invocation.namespace ??
    kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ??
    'default';
  try {
    const text = await runCommand(
      invocation.command,
      namespace,
      invocation.output,
      kubeReads(kubeConfig),
      new Date(),
    );
    process.stdout.write(text);
    return 0;
  } catch (error) {
    process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
