/**
 * `kubectl sandbox …` (a kubectl plugin; bin/kubectl-sandbox runs the bundle built from this file): which
 * sessions reference a sandbox and which are foreign to its worktree, why its deletion is blocked, what the
 * shell reaper retired for a session. Wiring only: flags → kubectl reads → text. Exit 0 answered, 1 failed,
 * 2 usage. Runs on Node.js >= 20 (the bundle's target).
 */
import { parseInvocation, USAGE, UsageError, type Invocation } from './plugin/args.ts';
import { kubectlProcess, kubectlReads } from './plugin/kubectl-reads.ts';
import { printable } from './plugin/printable.ts';
import { runCommand } from './plugin/run.ts';

/** kubectl on PATH: the one that ran this plugin, in the usual case. */
const KUBECTL = 'kubectl';

const fail = (error: unknown): void => {
  process.stderr.write(`error: ${printable(error instanceof Error ? error.message : String(error))}\n`);
};

async function main(argv: readonly string[]): Promise<number> {
  let invocation: Invocation;
  try {
    invocation = parseInvocation(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`error: ${printable(error.message)}\n\n${USAGE}`);
    return 2;
  }
  if (invocation.kind === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    const ports = kubectlReads(kubectlProcess(KUBECTL, invocation.kubectlFlags));
    process.stdout.write(
      await runCommand(invocation.command, invocation.scope, invocation.output, ports, new Date()),
    );
    return 0;
  } catch (error) {
    fail(error);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
