/**
 * One conformance suite for every client for agent hosts (issue 29): each scenario (scenarios/) runs for each
 * client (drivers.ts), against the local control plane and an operator whose consistent LIST the scenarios can
 * hold. The clients are driven through their drivers (test/conformance/protocol.md), so the scenarios are
 * written once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, inject, it } from 'vitest';
import { testNamespace, kubeConfig } from '../../harness/kube.ts';
import { grantOperatorRbac, startOperator, type RunningOperator } from '../controller/operator.ts';
import { gated, Gate, type Context } from './context.ts';
import { DRIVERS, Host, preparePython, type DriverSpec } from './drivers.ts';
import { startFaultProxy, type FaultProxy } from './fault-proxy.ts';
import { SCENARIOS } from './scenarios/index.ts';

const namespace = testNamespace('conformance');
const gates = new Map<string, Gate>();
let operator: RunningOperator;
let directory: string;
/** What the running scenario started: stopped after it, whatever its outcome. */
let started: { hosts: Host[]; proxies: FaultProxy[]; gates: Gate[] } = { hosts: [], proxies: [], gates: [] };

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'conformance-'));
  await Promise.all([preparePython(), grantOperatorRbac()]);
  operator = startOperator(namespace, [], gated(gates));
}, 300_000);
afterEach(async () => {
  for (const gate of started.gates) gate.open();
  await Promise.all(started.hosts.map((host) => host.stop()));
  await Promise.all(started.proxies.map((proxy) => proxy.close()));
  started = { hosts: [], proxies: [], gates: [] };
});
afterAll(async () => {
  for (const gate of gates.values()) gate.open();
  await operator.stop();
  await rm(directory, { recursive: true, force: true });
});

function context(client: DriverSpec): Context {
  return {
    namespace,
    client,
    name: (base) => `${base}-${client.short}`,
    host() {
      const host = new Host(client, inject('kubeconfig'));
      started.hosts.push(host);
      return host;
    },
    async proxy(faults) {
      const proxy = await startFaultProxy(kubeConfig(), directory, () => faults);
      started.proxies.push(proxy);
      return proxy.kubeconfigPath;
    },
    gate(sandbox, when) {
      const gate = new Gate(when);
      gates.set(sandbox, gate);
      started.gates.push(gate);
      return gate;
    },
  };
}

for (const client of DRIVERS)
  describe(`the ${client.name} client`, () => {
    for (const scenario of SCENARIOS) it(scenario.name, () => scenario.run(context(client)));
  });
