/**
 * `npm run bench [-- suite...]`: prints figures and ratios against baselines measured in the same run.
 * Suites: core (index and legacy walk), sidecar (shell reaper), controller (deletions and memory on a local
 * control plane), store-memory (the cache's heap alone, no control plane), sandbox-cache (bytes per cached
 * Sandbox, compiled, against keeping it whole), peer (issue 13: ours compiled vs kubernetes-sigs/agent-sandbox vs raw pod requests, on a local
 * control plane; see test/bench/peer/bench.ts for its settings), real-node (real containers vs kwok), reaper-pod
 * (the shell reaper inside a real pod, issue 12), drain (kubectl drain of sandboxes that move, issue 27), suspend
 * (suspend → pods gone and resume → Ready, p50/p99, beside bare pods' delete and create, issue 27), claims
 * (issue 28: warm pools and claims, ours beside agent-sandbox's and a raw label update; test/bench/claims/bench.ts;
 * it ends with claim-exec), claim-exec (issue 28 on the real node: claim → first command run in the sandbox).
 */
import { controllerBenchmarks } from './controller/bench.ts';
import { coreBenchmarks } from './core/bench.ts';
import { peerBenchmarks } from './peer/bench.ts';
import { sidecarBenchmarks } from './sidecar/bench.ts';
import { storeMemoryBenchmarks } from './controller/store-memory.ts';
import { sandboxCacheBenchmarks } from './controller/sandbox-cache.ts';
import { realNodeBenchmarks } from './real-node/bench.ts';
import { reaperPodBenchmarks } from './real-node/reaper-pod.ts';
import { drainBenchmarks } from './controller/drain.ts';
import { suspendBenchmarks } from './controller/suspend.ts';
import { claimsBenchmarks } from './claims/bench.ts';
import { claimExecBenchmarks } from './real-node/claim-exec.ts';

const suites: Record<string, () => Promise<void>> = {
  core: coreBenchmarks,
  sidecar: sidecarBenchmarks,
  'store-memory': storeMemoryBenchmarks,
  'sandbox-cache': sandboxCacheBenchmarks,
  controller: controllerBenchmarks,
  peer: peerBenchmarks,
  'real-node': realNodeBenchmarks,
  'reaper-pod': reaperPodBenchmarks,
  drain: drainBenchmarks,
  suspend: suspendBenchmarks,
  claims: claimsBenchmarks,
  'claim-exec': claimExecBenchmarks,
};

const wanted = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
const selected = wanted.length > 0 ? wanted : Object.keys(suites);
for (const name of selected) {
  const suite = suites[name];
  if (!suite) {
    console.error(`unknown benchmark suite "${name}"; known: ${Object.keys(suites).join(', ')}`);
    process.exit(2);
  }
  console.log(`# ${name} (node ${process.version}, ${new Date().toISOString()})`);
  await suite();
}
