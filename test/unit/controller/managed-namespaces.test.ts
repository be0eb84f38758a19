/** The per-namespace opt-in's operator side (issue 26): Sandboxes outside the labelled namespaces are skipped, said once. */
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  ManagedNamespaces,
  managedNamespacesResource,
} from '../../../operator/controller/cache/managed-namespaces.ts';
import { loadConfig } from '../../../operator/controller/wiring/config.ts';

const LABEL = 'sandbox.agents.dev/managed=true';
const labelled = (name: string) => ({ metadata: { name, labels: { 'sandbox.agents.dev/managed': 'true' } } });

function capturingLog() {
  const lines: { msg: string; namespace?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as { msg: string; namespace?: string });
      done();
    },
  });
  return { log: pino({ level: 'warn' }, sink), lines };
}

describe('ManagedNamespaces', () => {
  it('selects the namespaces carrying the label, in the watched one only when there is one', () => {
    expect(managedNamespacesResource(LABEL, undefined)).toMatchObject({
      path: '/api/v1/namespaces',
      labelSelector: LABEL,
    });
    expect(managedNamespacesResource(LABEL, undefined).fieldSelector).toBeUndefined();
    expect(managedNamespacesResource(LABEL, 'team-a').fieldSelector).toBe('metadata.name=team-a');
  });

  it('skips an unlabelled namespace’s Sandboxes and says so once, again only after it was labelled and unlabelled', () => {
    const { log, lines } = capturingLog();
    const changed: string[] = [];
    const managed = new ManagedNamespaces(LABEL, (name) => changed.push(name));
    managed.replace([labelled('team-a')]);
    expect(managed.skips('team-a', log)).toBe(false);
    expect([managed.skips('team-b', log), managed.skips('team-b', log)]).toEqual([true, true]);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.msg).toContain(`kubectl label namespace team-b ${LABEL}`);
    managed.apply('ADDED', labelled('team-b'));
    expect(managed.skips('team-b', log)).toBe(false);
    managed.apply('DELETED', labelled('team-b'));
    expect(managed.skips('team-b', log)).toBe(true);
    expect(lines.map((line) => line.namespace)).toEqual(['team-b', 'team-b']);
    expect(changed).toEqual(['team-a', 'team-b', 'team-b']);
  });
});

describe('--managed-namespace-label', () => {
  it('is empty (every namespace) by default, key=value when given, and refused otherwise naming the flag', () => {
    expect(loadConfig([], {}).managedNamespaceLabel).toBe('');
    expect(loadConfig(['--managed-namespace-label', LABEL], {}).managedNamespaceLabel).toBe(LABEL);
    expect(() => loadConfig(['--managed-namespace-label', 'managed'], {})).toThrow(/managed-namespace-label/);
  });
});
