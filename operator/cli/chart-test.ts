// `helm test`'s sandbox round trip, run by the chart's test Pod in the operator image:
//   node dist/bundle/chart-test.mjs --namespace <ns> --image <image> [--timeout-seconds 120] [--node-name <node>]
// It creates a Sandbox, waits for its Ready condition, deletes it and waits until it is gone. Exit 0 on success;
// on failure it says which step did not finish and the Sandbox's last conditions.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { GROUP, SANDBOX, VERSION, API_VERSION } from '../api/names.ts';
import { jsonClientFor } from '../kube/clients.ts';
import { statusOf } from '../kube/errors.ts';
import { segment } from '../kube/plain-json.ts';

type Observed = {
  status?: { phase?: string; conditions?: { type: string; status: string; message?: string }[] };
};

const { values } = parseArgs({
  options: {
    namespace: { type: 'string' },
    image: { type: 'string' },
    'timeout-seconds': { type: 'string', default: '120' },
    // No scheduler on the local control plane: its tests bind the pod to a node themselves.
    'node-name': { type: 'string' },
  },
  strict: true,
});
const namespace = values.namespace;
const image = values.image;
const timeoutMs = Number(values['timeout-seconds']) * 1000;
if (!namespace || !image || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
  process.stderr.write('usage: chart-test --namespace <ns> --image <image> [--timeout-seconds N]\n');
  process.exit(2);
}

const kc = new KubeConfig();
kc.loadFromDefault();
const json = jsonClientFor(kc);
const name = `helm-test-${randomBytes(3).toString('hex')}`;
const sandboxes = `/apis/${GROUP}/${VERSION}/namespaces/${segment(namespace)}/${SANDBOX.plural}`;
const say = (line: string) => process.stdout.write(`${line}\n`);

async function read(): Promise<Observed | undefined> {
  try {
    return (await json({ method: 'GET', path: `${sandboxes}/${segment(name)}` })) as Observed;
  } catch (error) {
    if (statusOf(error) === 404) return undefined;
    throw error;
  }
}

async function until(what: string, done: (sandbox: Observed | undefined) => boolean, deadline: number) {
  let last: Observed | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (done(last)) return;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  const conditions = last?.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.message ?? ''}`);
  throw new Error(
    `Sandbox ${namespace}/${name}: ${what} did not happen within ${timeoutMs / 1000} s ` +
      `(phase ${last?.status?.phase ?? 'none'}; conditions: ${conditions?.join('; ') ?? 'none'})`,
  );
}

const ready = (s: Observed | undefined) =>
  s?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

async function main(): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const nodeName = values['node-name'];
  await json({
    method: 'POST',
    path: sandboxes,
    body: {
      apiVersion: API_VERSION,
      kind: SANDBOX.kind,
      metadata: { name, namespace, labels: { 'app.kubernetes.io/component': 'helm-test' } },
      spec: {
        replicas: 1,
        podTemplate: { spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'probe', image }] } },
      },
    },
  });
  say(`created Sandbox ${namespace}/${name}`);
  try {
    await until('Ready=True', ready, deadline);
    say('the operator made it Ready');
  } finally {
    await json({ method: 'DELETE', path: `${sandboxes}/${segment(name)}` }).catch((error: unknown) => {
      if (statusOf(error) !== 404) throw error;
    });
  }
  say('deleted it');
  await until('removal', (s) => s === undefined, deadline);
  say('the operator released it and it is gone');
}

main().catch((error: unknown) => {
  process.stderr.write(`helm test failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
