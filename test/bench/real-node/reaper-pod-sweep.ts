/**
 * The script reaper-pod.ts runs in the sidecar's container (node, the sidecar's own modules bundled into it): times one /proc scan,
 * the escapee sweep as a retire of `turn` runs it (its group excluded), and the same sweep with no group
 * excluded, so every marked process's environ is read. Prints JSON.
 */
export function sweepScript(session: string, turn: string, runs: number): string[] {
  return `
import { createProcTable } from './operator/sidecar/process/os/proc-table.ts';
import { indexSnapshot, sweepEscapees } from './operator/sidecar/process/retire/survey.ts';
const table = createProcTable();
const scope = { session: ${JSON.stringify(session)}, turns: new Set([${JSON.stringify(turn)}]) };
const none = new Set();
const out = { scan: [], retireSweep: [], markedSweep: [], processes: 0 };
const time = async (work) => { const t = performance.now(); await work(); return performance.now() - t; };
for (let i = 0; i < ${String(runs)}; i += 1) {
  let stats = [];
  out.scan.push(await time(async () => { stats = await table.scan(); }));
  out.processes = stats.length;
  // A retire's group: the largest group in the pod that is not the pause process's.
  const sizes = new Map();
  for (const s of stats) sizes.set(s.pgrp, (sizes.get(s.pgrp) ?? 0) + 1);
  const group = [...sizes.entries()].filter(([g]) => g !== 1).sort((a, b) => b[1] - a[1])[0]?.[0];
  const groups = new Set(group === undefined ? [] : [group]);
  out.retireSweep.push(await time(async () => sweepEscapees(table, indexSnapshot(await table.scan()), scope, groups, 0, none)));
  out.markedSweep.push(await time(async () => sweepEscapees(table, indexSnapshot(await table.scan()), scope, none, 0, none)));
}
for (const list of [out.scan, out.retireSweep, out.markedSweep]) list.sort((a, b) => a - b);
console.log(JSON.stringify(out));
process.exit(0);
`.split('\n');
}
