/**
 * Argo CD's health checks for our kinds (operator/api/health/argocd), run as Argo CD runs them: in gopher-lua,
 * the interpreter Argo CD embeds, with the libraries a customization from argocd-cm gets (docs/health.md).
 * Each case of each health_test.yaml (Argo CD's own test format) passes; each test object is one our schema
 * accepts; and for every Sandbox case kstatus (what Flux and kpt read) agrees with the health Argo CD shows.
 */
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseSandbox, parseSessionReference } from '../../../operator/api/parse.ts';
import {
  ARGOCD_HEALTH_DIR,
  argoCdHealthTests,
  ensureHealthCheckers,
  kstatusOf,
  type ArgoCdHealthCase,
} from '../../harness/health-checks.ts';

type TestFile = { tests: { inputPath: string; healthStatus: { status: string; message?: string } }[] };

/** The cases as the health_test.yaml files list them, read here so each is a test of its own. */
async function listedCases(): Promise<{ kind: string; dir: string; inputPath: string }[]> {
  const cases: { kind: string; dir: string; inputPath: string }[] = [];
  for (const entry of await readdir(ARGOCD_HEALTH_DIR, { recursive: true })) {
    if (!entry.endsWith('health_test.yaml')) continue;
    const dir = join(ARGOCD_HEALTH_DIR, dirname(entry));
    const file = parse(await readFile(join(ARGOCD_HEALTH_DIR, entry), 'utf8')) as TestFile;
    for (const test of file.tests)
      cases.push({ kind: dirname(entry).split('/').at(-1)!, dir, inputPath: test.inputPath });
  }
  return cases;
}

const cases = await listedCases();
let results: ArgoCdHealthCase[] = [];

beforeAll(async () => {
  await ensureHealthCheckers(); // a cold build takes a few minutes on 2 cores; cached afterwards
  results = await argoCdHealthTests();
}, 900_000);

const read = async (dir: string, inputPath: string) =>
  parse(await readFile(join(dir, inputPath), 'utf8')) as unknown;

describe('the Argo CD health checks', () => {
  it('have test cases for both kinds', () => {
    expect(new Set(cases.map((c) => c.kind))).toEqual(new Set(['Sandbox', 'SessionReference']));
    expect(results.length).toBe(cases.length);
  });

  it.each(cases)('$kind: $inputPath', async ({ kind, dir, inputPath }) => {
    const result = results.find((r) => dirname(r.script) === dir && r.inputPath === inputPath);
    expect(result, 'the runner ran this case').toBeDefined();
    expect(result?.actual).toEqual(result?.expected);
    expect(result?.passed).toBe(true);
    const object = await read(dir, inputPath);
    const parsed = kind === 'Sandbox' ? parseSandbox(object) : parseSessionReference(object);
    expect(parsed.ok ? 'valid' : parsed.error.message, 'the test object is one the schema accepts').toBe(
      'valid',
    );
  });

  it('read each Sandbox case as kstatus reads it', async () => {
    const sandboxCases = cases.filter((c) => c.kind === 'Sandbox');
    const objects = await Promise.all(sandboxCases.map((c) => read(c.dir, c.inputPath)));
    const kstatus = await kstatusOf(objects);
    const pairs = sandboxCases.map((c, i) => {
      const result = results.find((r) => dirname(r.script) === c.dir && r.inputPath === c.inputPath);
      const object = objects[i] as { metadata: { deletionTimestamp?: string }; status?: object };
      return {
        case: c.inputPath,
        argo: result?.actual.status,
        kstatus: kstatus[i]?.status,
        deleting: object.metadata.deletionTimestamp !== undefined,
        noStatus: object.status === undefined,
      };
    });
    const expected: Record<string, string> = {
      Healthy: 'Current',
      Progressing: 'InProgress',
      Degraded: 'Failed',
      // kstatus has no Suspended: with Reconciling and Stalled False it falls back to Ready, which is False
      // (no pod serves), so it reads a suspended sandbox InProgress (docs/health.md).
      Suspended: 'InProgress',
    };
    for (const pair of pairs)
      expect(pair.kstatus, pair.case).toBe(
        // kstatus reads any object with a deletionTimestamp as Terminating, before its conditions; and one
        // without any status as Current: the race the CRD's status default closes (a CRD from before it).
        pair.deleting ? 'Terminating' : pair.noStatus ? 'Current' : expected[pair.argo ?? ''],
      );
    expect(pairs.filter((p) => p.noStatus).map((p) => p.argo)).toEqual(['Progressing']);
  });
});

describe('the runner', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'argocd-health-'));
    return () => rm(scratch, { recursive: true, force: true });
  });

  it('fails a case whose health differs from the expected one', async () => {
    const dir = join(scratch, 'wrong', 'sandbox.agents.dev', 'Sandbox');
    await cp(join(ARGOCD_HEALTH_DIR, 'sandbox.agents.dev', 'Sandbox'), dir, { recursive: true });
    await writeFile(
      join(dir, 'health_test.yaml'),
      'tests:\n  - healthStatus: { status: Healthy, message: 1/1 pods ready }\n    inputPath: testdata/progressing_podsNotReady.yaml\n',
    );
    const [result] = await argoCdHealthTests(join(scratch, 'wrong'));
    expect(result).toMatchObject({
      passed: false,
      actual: { status: 'Progressing', message: '0/1 pods ready' },
    });
  });

  it('gives a script only what Argo CD gives a customization: no string library', async () => {
    const dir = join(scratch, 'libs', 'sandbox.agents.dev', 'Sandbox');
    await cp(join(ARGOCD_HEALTH_DIR, 'sandbox.agents.dev', 'Sandbox', 'testdata'), join(dir, 'testdata'), {
      recursive: true,
    });
    await writeFile(
      join(dir, 'health.lua'),
      'return { status = "Healthy", message = string.format("%d", 1) }\n',
    );
    await writeFile(
      join(dir, 'health_test.yaml'),
      'tests:\n  - healthStatus: { status: Healthy, message: "1" }\n    inputPath: testdata/healthy.yaml\n',
    );
    const [result] = await argoCdHealthTests(join(scratch, 'libs'));
    expect(result?.passed).toBe(false);
    expect(result?.actual.error).toContain("attempt to index a non-table object(nil) with key 'format'");
    expect(relative(scratch, result?.script ?? '')).toBe('libs/sandbox.agents.dev/Sandbox/health.lua');
  });
});
