/**
 * The clients under conformance and their drivers (test/conformance/protocol.md): one line per client. Every
 * scenario runs for every entry of DRIVERS, so a new client is one driver and one line here.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

const root = join(import.meta.dirname, '..', '..', '..');
const python = join(root, 'clients', 'python', '.venv', 'bin', 'python');
const pythonDriver = join(root, 'test', 'conformance', 'drivers', 'python_driver.py');

export type DriverSpec = {
  readonly name: string;
  /** Short, for the names of the objects a scenario makes for this client. */
  readonly short: string;
  readonly command: (kubeconfig: string) => readonly [string, readonly string[]];
};

export const DRIVERS: readonly DriverSpec[] = [
  {
    name: 'typescript',
    short: 'ts',
    command: (kubeconfig) => [
      process.execPath,
      [
        '--import',
        'tsx',
        join(root, 'test', 'conformance', 'drivers', 'typescript.ts'),
        '--kubeconfig',
        kubeconfig,
      ],
    ],
  },
  {
    name: 'python (blocking)',
    short: 'py',
    command: (kubeconfig) => [python, [pythonDriver, '--mode', 'sync', '--kubeconfig', kubeconfig]],
  },
  {
    name: 'python (asyncio)',
    short: 'pya',
    command: (kubeconfig) => [python, [pythonDriver, '--mode', 'async', '--kubeconfig', kubeconfig]],
  },
];

/** Makes clients/python/.venv (or finds it current): the Python drivers run in it. */
export async function preparePython(): Promise<void> {
  await promisify(execFile)('bash', [join(root, 'clients', 'python', 'venv.sh')], { timeout: 280_000 });
}

export type DriverError = {
  readonly kind: 'SandboxDeleting' | 'KubeRequestFailed' | 'SandboxClaimNotReady' | 'Other';
  readonly message: string;
  readonly reason?: 'Deleting' | 'CleanupFenced' | 'Gone' | 'Unreadable';
  readonly since?: string | null;
  readonly withdrawal?: 'Deleted' | 'Restored' | 'Unchanged' | 'LeftChanged';
  readonly step?: string;
  readonly status?: number | null;
  /** SandboxNotReady, SandboxClaimNotReady: what the last read said. */
  readonly seen?: string;
};

export type Answer =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: DriverError }
  /** The host died inside its delivery, as asked (`deliver: crash`). */
  | { readonly crashed: true; readonly delivered: unknown[] };

/** One agent host: a driver process of one client, answering one request at a time. */
export class Host {
  private readonly process: ChildProcessWithoutNullStreams;
  private readonly waiting = new Map<number, (answer: Answer) => void>();
  private nextId = 1;
  private stderr = '';
  readonly exited: Promise<number | null>;

  constructor(
    readonly spec: DriverSpec,
    kubeconfig: string,
  ) {
    const [command, args] = spec.command(kubeconfig);
    this.process = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.process.stderr.on(
      'data',
      (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-4000)),
    );
    createInterface({ input: this.process.stdout }).on('line', (line) => {
      const answer = JSON.parse(line) as Answer & { id: number };
      this.waiting.get(answer.id)?.(answer);
      this.waiting.delete(answer.id);
    });
    this.exited = new Promise((resolve) => this.process.on('exit', (code) => resolve(code)));
    void this.exited.then(() => {
      for (const [id, resolve] of this.waiting)
        resolve({
          ok: false,
          error: { kind: 'Other', message: `driver exited before answering ${id}: ${this.stderr}` },
        });
      this.waiting.clear();
    });
  }

  /** Sends one request; `kubeconfig` sends it through another (a fault proxy's). */
  call(op: string, args: object, kubeconfig?: string): Promise<Answer> {
    const id = this.nextId++;
    const answer = new Promise<Answer>((resolve) => this.waiting.set(id, resolve));
    this.process.stdin.write(`${JSON.stringify({ id, op, args, ...(kubeconfig ? { kubeconfig } : {}) })}\n`);
    return answer;
  }

  /** Like call, for a request that must succeed: its value. */
  async ok<T = unknown>(op: string, args: object, kubeconfig?: string): Promise<T> {
    const answer = await this.call(op, args, kubeconfig);
    if (!('ok' in answer) || !answer.ok)
      throw new Error(`${this.spec.name} ${op} did not succeed: ${JSON.stringify(answer)}\n${this.stderr}`);
    return answer.value as T;
  }

  /** Like call, for a request that must fail: its error. */
  async fails(op: string, args: object, kubeconfig?: string): Promise<DriverError> {
    const answer = await this.call(op, args, kubeconfig);
    if (!('ok' in answer) || answer.ok)
      throw new Error(`${this.spec.name} ${op} did not fail: ${JSON.stringify(answer)}`);
    return answer.error;
  }

  /** Ends the host as a restart does: stdin closed, the process gone. */
  async stop(): Promise<void> {
    this.process.stdin.end();
    const timer = setTimeout(() => this.process.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(timer);
  }
}
