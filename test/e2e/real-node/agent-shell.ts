// What an agent host does from inside a real sandbox pod's agent container, with the project's client
// (bundled from operator/sidecar/host and fed to the container's node: the operator image carries only its
// own bundles): register a shell through the sidecar's socket, end a turn over it.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { eventually, pending } from '../../harness/eventually.ts';
import { kubectl, kubectlOk } from '../../harness/kube.ts';
import { execScriptArgs, podScript } from '../../harness/pod-script.ts';

const CLIENT = "import { createReaperClient, spawnRegisteredShell } from './operator/sidecar/host/index.ts';";
const CONNECT = 'const client = createReaperClient({ socketPath: process.env.SANDBOX_REAPER_SOCKET });';

/** Waits until the pod's sidecar says it is ready (its socket serves), reporting its log's tail if not. */
export async function sidecarReady(namespace: string, pod: string): Promise<void> {
  await eventually(
    'the sidecar ready',
    async () => {
      const log = await kubectlOk(['logs', '-n', namespace, pod, '-c', 'shell-reaper']);
      return log.includes('shell reaper ready') ? true : pending({ log: log.slice(-600) });
    },
    60_000,
  );
}

async function runInAgent(namespace: string, pod: string, lines: readonly string[]) {
  const input = await podScript([CLIENT, CONNECT, ...lines]);
  const result = await kubectl(execScriptArgs(namespace, pod, 'agent'), { input });
  expect(result.exitCode, result.stderr).toBe(0);
  return result;
}

/** Registers one shell; answers the registration's kind (`Registered` when it runs). */
export async function registerShell(
  namespace: string,
  pod: string,
  shell: { readonly session: string; readonly turn: string; readonly command: string },
): Promise<string> {
  const { session, turn, command } = shell;
  const result = await runInAgent(namespace, pod, [
    `const shell = await spawnRegisteredShell({ client, session: ${JSON.stringify(session)}, turn: ${JSON.stringify(turn)}, command: ${JSON.stringify(command)} });`,
    "if (shell.registration.kind === 'Failed') console.error(String(shell.registration.error), shell.registration.error?.cause);",
    'console.log(shell.registration.kind); process.exit(0);',
  ]);
  if (result.stdout.trim() !== 'Registered')
    console.error(`registration from the agent container: ${result.stderr}`);
  return result.stdout.trim();
}

/** Ends a turn over the socket, as a host inside the pod does; answers the sidecar's decision. */
export async function endTurnFromAgent(
  namespace: string,
  pod: string,
  end: { readonly session: string; readonly turn: string; readonly role: 'Root' | 'Subagent' },
): Promise<string> {
  const request = { ...end, phase: 'Completed', origin: 'ParentMessage' };
  const result = await runInAgent(namespace, pod, [
    `const answer = await client.endTurn(${JSON.stringify(request)});`,
    'console.log(answer.decision); process.exit(0);',
  ]);
  return result.stdout.trim();
}

/** A field of a host process's /proc/<pid>/status, e.g. `Uid`; undefined once it exited. */
function statusField(pid: number, field: string): string | undefined {
  try {
    const line = readFileSync(`/proc/${String(pid)}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return line?.slice(field.length + 1).trim();
  } catch {
    return undefined; // exited while we looked
  }
}

/** The real uid of a host process (the first of the Uid line's four). */
export function uidOf(pid: number): number | undefined {
  const uids = statusField(pid, 'Uid');
  return uids === undefined ? undefined : Number(uids.split(/\s+/)[0]);
}

/** Capability numbers in linux/capability.h order. */
const CAPABILITIES = (
  'CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP LINUX_IMMUTABLE ' +
  'NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER SYS_MODULE SYS_RAWIO SYS_CHROOT ' +
  'SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE ' +
  'AUDIT_WRITE AUDIT_CONTROL SETFCAP MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ ' +
  'PERFMON BPF CHECKPOINT_RESTORE'
).split(' ');

/** What the runtime left a host process: its effective capabilities by name, and its seccomp mode (2: filter). */
export function confinementOf(pid: number): { capabilities: string[]; seccomp: string } | undefined {
  const mask = statusField(pid, 'CapEff');
  const seccomp = statusField(pid, 'Seccomp');
  if (mask === undefined || seccomp === undefined) return undefined;
  const bits = BigInt(`0x${mask}`);
  const capabilities = Array.from({ length: 64 }, (_, bit) => bit)
    .filter((bit) => (bits >> BigInt(bit)) & 1n)
    .map((bit) => CAPABILITIES[bit] ?? `CAP_${String(bit)}`);
  return { capabilities: capabilities.sort(), seccomp };
}
