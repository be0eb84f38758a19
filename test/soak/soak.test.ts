/**
 * The randomized adversarial soak (issue 9): agent hosts, users, GitOps and TTL cleanup act at random in
 * one namespace per sequence, many sequences side by side on one control plane, while the operator (its own
 * process) is SIGKILLed and restarted and talks through a proxy that injects API faults. Every invariant is
 * judged from the API server's audit log. Knobs: test/soak/settings.ts; figures: docs/soak.md.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { RESTRICTED_USER } from '@sandbox-operator/local-cluster';
import { kubeConfig } from '../harness/kube.ts';
import { grantOperatorRbac } from '../integration/controller/operator.ts';
import { AuditTail } from './audit-log.ts';
import { registerDeleteReview, type SoakDeleteReview } from './delete-review.ts';
import { evidence } from './invariants.ts';
import { FaultProxy, NO_FAULTS } from './fault-proxy.ts';
import { apiServerOf, writeProxiedKubeconfig } from './kube.ts';
import { OperatorFleet } from './operator-fleet.ts';
import { installRefusalPolicy } from './platform.ts';
import { failureReport, summary, totals } from './report.ts';
import { runPlan, violationsOf } from './runner.ts';
import type { SoakEnv } from './sequence.ts';
import { soakSettings } from './settings.ts';
import './provided-context.ts';

const settings = soakSettings(process.env);
let env: SoakEnv;
let fleet: OperatorFleet;
let tail: AuditTail;
let proxies: FaultProxy[] = [];
let logDir: string;
let review: SoakDeleteReview | undefined;

beforeAll(async () => {
  await grantOperatorRbac();
  logDir = await mkdtemp(join(tmpdir(), 'sandbox-operator-soak-'));
  const admin = kubeConfig();
  const { server, caPem } = apiServerOf(admin);
  const operatorProxy = new FaultProxy(
    server,
    caPem,
    {
      faultRate: settings.faultRate,
      maxConsecutive: 2,
      maxDelayMs: 40,
      watchDropRate: 0.5,
      watchErrorRate: 0.25,
    },
    settings.baseSeed,
  );
  const agentProxy = new FaultProxy(server, caPem, { ...NO_FAULTS, maxDelayMs: 30 }, settings.baseSeed + 1);
  proxies = [operatorProxy, agentProxy];
  const [operatorUrl, agentUrl] = [await operatorProxy.start(), await agentProxy.start()];
  const restricted = inject('restrictedKubeconfig');
  if (restricted === null) throw new Error('the soak needs its local control plane');
  const operatorKubeconfig = join(logDir, 'operator.kubeconfig');
  await writeProxiedKubeconfig(restricted, operatorUrl, operatorKubeconfig);
  tail = new AuditTail(inject('auditLogPath'), RESTRICTED_USER);
  await tail.start();
  review = await registerDeleteReview(logDir, settings.replicas, RESTRICTED_USER, settings.baseSeed);
  fleet = new OperatorFleet({
    main: inject('operatorMain'),
    replicas: settings.replicas,
    killEveryMs: settings.killEveryMs,
    restartAfterMs: [0, 1_500],
    logDir,
    kubeconfig: operatorKubeconfig,
    seed: settings.baseSeed,
    flags: ['--resync-ms', '5000', '--blocked-recheck-ms', '2000'],
    replicaFlags: review.replicaFlags,
  });
  fleet.start();
  await installRefusalPolicy(admin, settings.baseSeed.toString(36));
  let counter = 0;
  env = {
    connections: { admin, agentProxy: agentUrl },
    tail,
    operatorUser: RESTRICTED_USER,
    losses: (namespace) => ({
      faults: operatorProxy.takeFaults(namespace),
      kills: fleet.events
        .filter((e) => e.what !== 'reconciling' && !e.what.startsWith('started'))
        .map((e) => e.at),
    }),
    runTag: settings.baseSeed.toString(36),
    bounds: settings.bounds,
    next: () => counter++,
  };
  console.log(`soak: logs of the operator in ${logDir}; control plane logs in ${inject('clusterTempDir')}`);
}, 120_000);

afterAll(async () => {
  await fleet.stop();
  await review?.forwarder.stop();
  await tail.stop();
  for (const proxy of proxies) await proxy.stop();
});

it(
  `${settings.seeds.length} sequences keep every invariant`,
  async () => {
    const started = Date.now();
    let done = 0;
    const outcomes = await runPlan(
      env,
      {
        seeds: settings.seeds,
        parallel: settings.parallel,
        shrinkRuns: settings.shrinkRuns,
        ...(settings.path ? { path: settings.path } : {}),
      },
      (outcome) => {
        done++;
        const verdict = outcome.first ? `FAILED (${outcome.first.violations.length} violations)` : 'ok';
        console.log(
          `soak: seed ${outcome.seed} ${verdict}, ${outcome.runs} run(s) [${done}/${settings.seeds.length}, ${Math.round((Date.now() - started) / 1000)} s]`,
        );
        if (outcome.first) console.log(failureReport(outcome));
        else if (process.env['SOAK_TRACE'] === '1') console.log(outcome.last?.trace.join('\n'));
        if (outcome.error) console.log(`soak: seed ${outcome.seed} harness error: ${outcome.error}`);
      },
    );
    const t = totals(outcomes);
    const late = tail.lateWrites.map(evidence);
    const extra = {
      wallSeconds: Math.round((Date.now() - started) / 1000),
      parallel: settings.parallel,
      replicas: settings.replicas,
      bounds: settings.bounds,
      operatorKills: fleet.kills,
      operatorCrashes: fleet.crashes,
      deleteReviewsUnanswered: review?.forwarder.unanswered ?? 0,
      faults: proxies[0]?.counts ?? {},
      auditLines: tail.lines,
      operatorWritesAfterNamespaceGone: late.length,
      seeds: `${settings.seeds[0] ?? '?'}..${settings.seeds.at(-1) ?? '?'}`,
    };
    console.log(summary(t, extra));
    if (settings.reportPath)
      await writeFile(settings.reportPath, JSON.stringify({ totals: t, extra, outcomes }, null, 2));
    expect(
      violationsOf(outcomes).map(
        ({ seed, violation }) => `seed ${seed}: [${violation.signature}] ${violation.message}`,
      ),
    ).toEqual([]);
    expect(t.harnessErrors).toEqual([]);
    expect(late).toEqual([]);
  },
  6 * 3600_000,
);
