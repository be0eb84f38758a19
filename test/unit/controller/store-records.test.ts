import { describe, expect, it } from 'vitest';
import {
  decodePod,
  decodeReference,
  decodeSandbox,
  SharedStrings,
} from '../../../operator/controller/cache/store-records.ts';

const reference = (spec: Record<string, unknown>) => ({
  apiVersion: 'sandbox.agents.dev/v1alpha1',
  kind: 'SessionReference',
  metadata: { name: 'r1', namespace: 'ns', managedFields: [{ manager: 'agent-host' }] },
  spec: { sandbox: 'sbx', session: 'workspace_1', worktree: 'wt-1', route: 'r', role: 'Root', ...spec },
});

describe('store records', () => {
  it('keeps a reference as its index entry and the sandbox it names, nothing of the raw object', () => {
    const decoded = decodeReference(reference({ state: 'Attached' }), new SharedStrings());
    expect(decoded).toEqual({
      key: 'ns/r1',
      value: {
        sandboxKey: 'ns/sbx',
        entry: {
          name: 'r1',
          session: 'workspace_1',
          worktree: 'wt-1',
          state: 'Attached',
          role: 'Root',
          route: 'r',
          parentSession: undefined,
        },
      },
    });
  });

  it('keeps a malformed reference as an error against the sandbox it names', () => {
    const decoded = decodeReference(reference({ state: 'Lost' }), new SharedStrings());
    expect(decoded?.value.sandboxKey).toBe('ns/sbx');
    expect(decoded?.value.error?.field).toBe('spec.state');
    expect(decoded?.value.entry).toBeUndefined();
  });

  it('drops metadata no decision reads from a Sandbox (managedFields)', () => {
    const decoded = decodeSandbox(
      {
        apiVersion: 'sandbox.agents.dev/v1alpha1',
        kind: 'Sandbox',
        metadata: { name: 'sbx', namespace: 'ns', managedFields: [{ manager: 'kubectl' }] },
        spec: {
          worktree: 'wt-1',
          replicas: 1,
          podTemplate: { spec: { containers: [{ name: 'agent', image: 'agent:1' }] } },
        },
      },
      new SharedStrings(),
    );
    expect(decoded?.key).toBe('ns/sbx');
    expect(decoded?.value.ok === true && decoded.value.value.metadata).toEqual({
      name: 'sbx',
      namespace: 'ns',
    });
  });

  // Issue 26, #5: a tenant fills these up to the API server's object limit; no decision reads them.
  it("keeps of a Sandbox no pod template, no labels, and of its annotations only the operator's own", () => {
    const raw = (annotations: Record<string, string>) => ({
      apiVersion: 'sandbox.agents.dev/v1alpha1',
      kind: 'Sandbox',
      metadata: { name: 'sbx', namespace: 'ns', labels: { team: 'a'.repeat(63) }, annotations },
      spec: {
        worktree: 'wt-1',
        replicas: 1,
        podTemplate: {
          spec: { containers: [{ name: 'agent', image: 'agent:1', args: ['x'.repeat(30_000)] }] },
        },
      },
    });
    const state = (annotations: Record<string, string>) => {
      const decoded = decodeSandbox(raw(annotations), new SharedStrings());
      return decoded?.value.ok === true ? decoded.value.value : undefined;
    };
    const kept = state({
      'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{"podTemplate":"…"}}',
      'sandbox.agents.dev/erase-references': 'req-1',
      note: 'n'.repeat(4000),
    });
    expect(kept?.metadata).toEqual({
      name: 'sbx',
      namespace: 'ns',
      annotations: { 'sandbox.agents.dev/erase-references': 'req-1' },
    });
    expect(kept && 'podTemplate' in kept.spec).toBe(false);
    expect(kept?.spec).toMatchObject({ worktree: 'wt-1', replicas: 1 });
    // A map that had only others' annotations stays a map: the cleanup fence's patch adds to it.
    expect(state({ note: 'n' })?.metadata.annotations).toEqual({});
  });

  it('still refuses a Sandbox whose template is malformed: the template is parsed before it is dropped', () => {
    const decoded = decodeSandbox(
      {
        apiVersion: 'sandbox.agents.dev/v1alpha1',
        kind: 'Sandbox',
        metadata: { name: 'sbx', namespace: 'ns' },
        spec: { worktree: 'wt-1', podTemplate: { spec: { containers: [] } } },
      },
      new SharedStrings(),
    );
    expect(decoded?.value.ok).toBe(false);
  });

  it('ignores an object without a name and namespace, and keeps no record of a pod that is not a sandbox pod', () => {
    expect(decodeSandbox({ metadata: { name: 'x' } }, new SharedStrings())).toBeUndefined();
    expect(decodePod({ metadata: { name: 'p', namespace: 'ns' } }, new SharedStrings())).toEqual({
      key: 'ns/p',
      value: undefined,
    });
  });

  it('shares strings up to its bound, then starts over and still answers every value', () => {
    const strings = new SharedStrings(2);
    const values = ['a', 'b', 'c', 'a', 'b', 'd'].map((value) => strings.share(`${value}-${'x'.repeat(20)}`));
    expect(values.map((value) => value[0])).toEqual(['a', 'b', 'c', 'a', 'b', 'd']);
    expect(strings.share(undefined)).toBeUndefined();
  });
});
