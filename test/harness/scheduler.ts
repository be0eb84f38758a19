/**
 * A kube-scheduler of a test's own, under its own scheduler name: it places only the pods that name it
 * (`spec.schedulerName`), so a test can have pods scheduled — and moved off a cordoned node — without a
 * scheduler for every test (the local control plane runs one only beside its real node) and without touching
 * any other test's pods. The binary is the local control plane's (its cache).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBinaries } from '@sandbox-operator/local-cluster';

/** `log`: the tail of its stderr, for a test's failure message. */
export type TestScheduler = { stop(): Promise<void>; log(): string };

export async function startTestScheduler(kubeconfig: string, schedulerName: string): Promise<TestScheduler> {
  const { 'kube-scheduler': binary } = await ensureBinaries({ tools: ['kube-scheduler'] });
  const dir = await mkdtemp(join(tmpdir(), 'test-scheduler-'));
  const config = join(dir, 'config.yaml');
  await writeFile(
    config,
    [
      'apiVersion: kubescheduler.config.k8s.io/v1',
      'kind: KubeSchedulerConfiguration',
      `clientConnection: {kubeconfig: ${JSON.stringify(kubeconfig)}}`,
      'leaderElection: {leaderElect: false}',
      `profiles: [{schedulerName: ${JSON.stringify(schedulerName)}}]`,
      '',
    ].join('\n'),
  );
  const child = spawn(binary, [`--config=${config}`, '--secure-port=0', '--v=1'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-8192);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
    log: () => log,
  };
}
