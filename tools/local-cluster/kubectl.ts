// Runs the built kubectl against a kubeconfig and captures what it says.
import { spawn } from 'node:child_process';

export interface KubectlResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface KubectlOptions {
  /** Written to kubectl's stdin, e.g. a manifest for `apply -f -`. */
  readonly input?: string;
  readonly timeoutMs?: number;
}

export function runKubectl(
  binary: string,
  kubeconfig: string,
  args: readonly string[],
  options: KubectlOptions = {},
): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [`--kubeconfig=${kubeconfig}`, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      // A user's KUBECONFIG must never redirect a harness call to another cluster.
      env: { ...process.env, KUBECONFIG: kubeconfig },
      timeout: options.timeoutMs ?? 60_000,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      resolve({ exitCode: code ?? (signal === null ? -1 : 128), stdout, stderr });
    });
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      // kubectl may exit before reading all input (e.g. a usage error); its exit code tells why.
      if (error.code !== 'EPIPE') reject(error);
    });
    child.stdin.end(options.input ?? '');
  });
}
