/**
 * Issue 2's figures: an exclusivity decision from the index against the old serial walk, and the legacy
 * reconciliation of the sized-for account shape with the pool and the legacy skip, the pool alone, and serially.
 */
import { INDEX_LIMITS } from '../../../operator/api/index.ts';
import {
  buildReferenceIndex,
  decideExclusivity,
  type ReferenceEntry,
} from '../../../operator/exclusivity/index.ts';
import { reconcileSandboxReferences, systemClock } from '../../../operator/ledger-walk/index.ts';
import { figure, heading, ms, percentile, ratio, timed } from '../report.ts';
import {
  CONTROL_PLANE_OWNERS,
  LEGACY_OWNERS,
  LOOKUP_LATENCY_MS,
  SimulatedLocator,
  accountLedger,
  accountOwners,
  serialWalk,
  target,
} from './account.ts';

function references(count: number): ReferenceEntry[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `sref-${String(i).padStart(4, '0')}`,
    session: `workspace_${i}`,
    worktree: 'wt-0',
    state: i % 4 === 0 ? 'Detached' : 'Attached',
    role: 'Root',
    route: `shared-control-v1/wt-0/${i}`,
    parentSession: undefined,
  }));
}

async function decisionFromIndex(): Promise<void> {
  heading('Exclusivity decision, 540 references (index) vs the old serial walk (540 lookups x 57 ms)');
  const refs = references(540);
  const limits = { ...INDEX_LIMITS, maxReferences: 1024, maxBytes: 1024 * 1024 }; // 540 > 512: measure the decision, not the latch
  const samples: number[] = [];
  for (let i = 0; i < 2_000; i += 1) {
    const started = performance.now();
    const index = buildReferenceIndex(refs, limits);
    const verdict = decideExclusivity({ index, target: { worktree: 'wt-0' }, legacy: { kind: 'Marked' } });
    samples.push(performance.now() - started);
    if (verdict.verdict !== 'Exclusive') throw new Error(`unexpected verdict ${verdict.verdict}`);
  }
  samples.sort((a, b) => a - b);
  const p50 = percentile(samples, 50);
  figure('index: build + decide, p50 over 2,000 runs', ms(p50));
  figure('index: build + decide, p99', ms(percentile(samples, 99)));
  const owners = accountOwners();
  const locator = new SimulatedLocator();
  const serial = await timed(() => serialWalk(owners, locator));
  figure(
    `baseline: serial walk, ${locator.lookups} lookups`,
    ms(serial.elapsedMs),
    `(ideal ${ms(540 * LOOKUP_LATENCY_MS)})`,
  );
  ratio('speed-up of the index decision over the serial walk', serial.elapsedMs, p50);
}

async function reconciliation(): Promise<void> {
  heading(
    `Legacy reconciliation, ${LEGACY_OWNERS + CONTROL_PLANE_OWNERS} owners (${LEGACY_OWNERS} legacy), 57 ms lookups`,
  );
  const owners = accountOwners();
  const run = async (
    label: string,
    ideal: number,
    options: { concurrency: number; skip: boolean; budgetMs: number },
  ) => {
    const locator = new SimulatedLocator();
    const { value, elapsedMs } = await timed(() =>
      reconcileSandboxReferences({
        target,
        ledger: accountLedger(owners),
        locator,
        clock: systemClock,
        limits: { budgetMs: options.budgetMs, perCallMs: 5_000, concurrency: options.concurrency },
        ...(options.skip ? {} : { planeRule: () => true }),
      }),
    );
    figure(
      label,
      ms(elapsedMs),
      `${value.kind}, ${locator.lookups} lookups, ideal ${ms(ideal)} (${((elapsedMs / ideal) * 100).toFixed(0)}% of ideal)`,
    );
    return elapsedMs;
  };
  const pooledSkip = await run(
    'pool of 8 + legacy skip',
    Math.ceil(CONTROL_PLANE_OWNERS / 8) * LOOKUP_LATENCY_MS,
    { concurrency: 8, skip: true, budgetMs: 20_000 },
  );
  const pooled = await run(
    'pool of 8, no skip',
    Math.ceil((LEGACY_OWNERS + CONTROL_PLANE_OWNERS) / 8) * LOOKUP_LATENCY_MS,
    { concurrency: 8, skip: false, budgetMs: 20_000 },
  );
  const serial = await run(
    'serial (pool of 1, no skip, budget lifted)',
    (LEGACY_OWNERS + CONTROL_PLANE_OWNERS) * LOOKUP_LATENCY_MS,
    { concurrency: 1, skip: false, budgetMs: 120_000 },
  );
  ratio('pool+skip vs serial', serial, pooledSkip);
  ratio('pool alone vs serial', serial, pooled);
  await run('serial under the 20 s budget (the seed\u2019s failure mode)', 20_000, {
    concurrency: 1,
    skip: false,
    budgetMs: 20_000,
  });
}

export async function coreBenchmarks(): Promise<void> {
  await decisionFromIndex();
  await reconciliation();
}
