/**
 * The API server and the operator's parser agree on what a Sandbox may hold (issue 25, #8): an object the API
 * server stores and the parser refuses is one the operator can only leave untouched. For each candidate value
 * of the fields where they once differed — timestamps and map keys — the API server stores it exactly when the
 * parser reads it.
 */
import { describe, expect, it } from 'vitest';
import { parseSandbox } from '../../../operator/api/parse.ts';
import { kubectl, kubectlOk, testNamespace } from '../../harness/kube.ts';
import { sandbox, type Manifest } from './examples.ts';

const ns = testNamespace('parser-agreement');

const TIMESTAMPS = [
  '2026-01-01T00:00:00Z',
  '2026-01-01T00:00:00.123456Z',
  '2026-01-01T00:00:00+02:00',
  '2026-01-01T00:00:00', // no offset
  '2026-01-01 00:00:00Z', // a space for the T
  '2026-01-01t00:00:00z', // lower case
  '2026-01-01T00:00:00+0200', // an offset without its colon
  '2026-02-30T00:00:00Z', // no such day
];

const KEYS = ['a', 'example.com/role', `${'k'.repeat(253)}/${'n'.repeat(63)}`, 'k'.repeat(318), ''];

/** Whether the API server stores the object, and whether the parser reads what it would store. */
async function verdicts(manifest: Manifest, status?: Record<string, unknown>) {
  const { name } = manifest.metadata;
  await kubectl(['delete', 'sandbox', name, '-n', ns, '--ignore-not-found', '--wait=false']);
  const withStatus = status === undefined ? manifest : { ...manifest, status };
  const parsed = parseSandbox(withStatus).ok;
  let stored: boolean;
  if (status === undefined) {
    stored = (await kubectl(['create', '-f', '-'], { input: JSON.stringify(manifest) })).exitCode === 0;
  } else {
    await kubectlOk(['create', '-f', '-'], { input: JSON.stringify(manifest) });
    const patch = JSON.stringify({ status });
    const args = ['patch', 'sandbox', name, '-n', ns, '--subresource=status', '--type=merge', '-p', patch];
    stored = (await kubectl(args)).exitCode === 0;
  }
  return { stored, parsed };
}

describe('the API server stores a value exactly when the parser reads it', () => {
  it.each(TIMESTAMPS)('timestamp %j', async (timestamp) => {
    const result = await verdicts(sandbox(ns, 'timestamps'), { unreferencedSince: timestamp });
    expect(result.stored).toBe(result.parsed);
  });

  it.each(KEYS.map((key) => [key.length, key] as const))('pod label key of %i characters', async (_, key) => {
    const manifest = sandbox(ns, 'keys', {
      podTemplate: {
        metadata: { labels: { [key]: 'v' } },
        spec: { containers: [{ name: 'workspace', image: 'registry.example/sandbox:1' }] },
      },
    });
    const result = await verdicts(manifest);
    expect(result.stored).toBe(result.parsed);
  });

  it('holds both verdicts for the candidates (the list exercises agreement both ways)', () => {
    // Guards the lists themselves: each must hold values the parser reads and values it refuses.
    const parses = (timestamp: string) =>
      parseSandbox({ ...sandbox(ns, 't'), status: { unreferencedSince: timestamp } }).ok;
    expect(TIMESTAMPS.filter(parses).length).toBeGreaterThan(0);
    expect(TIMESTAMPS.filter((t) => !parses(t)).length).toBeGreaterThan(0);
  });
});
