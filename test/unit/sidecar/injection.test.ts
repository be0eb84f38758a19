import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../operator/sidecar/contract/config.ts';
import { REAPER_VOLUMES, reaperInjection } from '../../../operator/sidecar/injection/injection.ts';

const injection = reaperInjection({
  image: 'registry.example/sandbox-operator:0.1.0',
  command: ['node', '--import', 'tsx', 'operator/cli/sidecar.ts'],
  sandbox: 'sbx-a',
  gracePeriodSeconds: 7,
  mode: { kind: 'Privileged' },
});
const container = injection.initContainer as {
  env: { name: string; value?: string }[];
  securityContext: {
    runAsUser: number;
    capabilities: { drop: string[]; add: string[] };
    allowPrivilegeEscalation: boolean;
  };
  volumeMounts: { name: string; readOnly?: boolean }[];
};

describe('sidecar injection', () => {
  it('shares the PID namespace and gives the agent containers no service-account token', () => {
    expect(injection.podSpec).toEqual({ shareProcessNamespace: true, automountServiceAccountToken: false });
  });

  it('runs the sidecar as root with only KILL, SYS_PTRACE, DAC_OVERRIDE and CHOWN, no escalation', () => {
    expect(container.securityContext).toMatchObject({
      runAsUser: 0,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'], add: ['KILL', 'SYS_PTRACE', 'DAC_OVERRIDE', 'CHOWN'] },
    });
  });

  it('injects a configuration the sidecar accepts, with the Sandbox’s grace period', () => {
    const env = Object.fromEntries(
      container.env.flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]])),
    );
    expect(loadConfig({ ...env, SANDBOX_REAPER_NAMESPACE: 'ns' })).toMatchObject({
      graceSeconds: 7,
      sandbox: 'sbx-a',
      namespace: 'ns',
    });
  });

  it('mounts the token only in the sidecar, and the socket read-only in the agent', () => {
    expect(container.volumeMounts.find((m) => m.name === REAPER_VOLUMES.token)).toMatchObject({
      readOnly: true,
    });
    expect(injection.agentVolumeMounts.map((m) => m['name'])).not.toContain(REAPER_VOLUMES.token);
    expect(injection.agentVolumeMounts.find((m) => m['name'] === REAPER_VOLUMES.socket)).toMatchObject({
      readOnly: true,
    });
  });
});
