/** Reading the operator process's own /metrics during a benchmark. */
import { createServer } from 'node:net';

export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });

/**
 * One sample of a metric line (`name{labels} value`) carrying every label given (`{a="x"}` matches
 * `name{a="x",b="y"}` too: workqueue_depth also carries `controller`), or undefined while the operator is not
 * serving. An exact prefix match waited for ever once a metric gained a label.
 */
export async function metric(port: number, name: string, labels = ''): Promise<number | undefined> {
  const wanted = labels
    .replace(/^\{|\}$/g, '')
    .split(',')
    .filter(Boolean);
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const line = text.split('\n').find((l) => {
      if (!l.startsWith(`${name}{`) && !l.startsWith(`${name} `)) return false;
      const own = l
        .slice(name.length, l.lastIndexOf(' '))
        .replace(/^\{|\}$/g, '')
        .split(',');
      return wanted.every((label) => own.includes(label));
    });
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  } catch {
    return undefined;
  }
}

/** Ready, with an empty queue and no reconcile running: the operator has caught up with the namespace. */
export async function queueSettled(port: number): Promise<boolean> {
  const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
    (r) => r.status === 200,
    () => false,
  );
  if (!ready) return false;
  const depth = await metric(port, 'workqueue_depth', '{name="sandbox"}');
  const active = await metric(port, 'controller_runtime_active_workers', '{controller="sandbox"}');
  const reconciled = await metric(port, 'controller_runtime_reconcile_total');
  return depth === 0 && active === 0 && reconciled !== undefined;
}
