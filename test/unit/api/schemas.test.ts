import { describe, expect, it } from 'vitest';
import { parseSandbox, sandboxSpecSchema, sessionReferenceSpecSchema } from '../../../operator/api/index.ts';

const podTemplate = { spec: { containers: [{ name: 'agent', image: 'busybox' }] } };

describe('Sandbox spec defaults', () => {
  it('are the documented ones: provider kubernetes, 1 pod, Retain after 300 s, reaper off with 5 s grace, Running', () => {
    expect(sandboxSpecSchema.parse({ podTemplate })).toEqual({
      provider: 'kubernetes',
      replicas: 1,
      podTemplate,
      cleanup: { policy: 'Retain', ttlSecondsAfterUnreferenced: 300 },
      shellReaper: { enabled: false, gracePeriodSeconds: 5 },
      operatingMode: 'Running',
    });
  });

  it('bound spec.idle.suspendAfterSeconds, naming the field', () => {
    const idle = (seconds: number) =>
      sandboxSpecSchema.safeParse({
        podTemplate,
        workspace: 'Ephemeral',
        idle: { suspendAfterSeconds: seconds },
      });
    expect(idle(5).success).toBe(true);
    expect(idle(2_592_000).success).toBe(true);
    for (const bad of [4, 2_592_001]) {
      const parsed = idle(bad);
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.path).toEqual(['idle', 'suspendAfterSeconds']);
    }
  });

  it('pass unknown pod spec fields through to the pod', () => {
    const spec = sandboxSpecSchema.parse({
      podTemplate: { spec: { containers: [{ name: 'a', image: 'b', command: ['sleep'] }], nodeName: 'n1' } },
    });
    expect(spec.podTemplate.spec).toMatchObject({ nodeName: 'n1', containers: [{ command: ['sleep'] }] });
  });
});

describe('parseSandbox', () => {
  const sandbox = (spec: unknown) => ({
    apiVersion: 'sandbox.agents.dev/v1alpha1',
    kind: 'Sandbox',
    metadata: { name: 'sbx-a', namespace: 'team-a' },
    spec,
  });

  it('names the field and the limit of a malformed object', () => {
    const parsed = parseSandbox(sandbox({ podTemplate, replicas: 9 }));
    expect(!parsed.ok && parsed.error.field).toBe('spec.replicas');
    expect(!parsed.ok && parsed.error.message).toMatch(/8/);
  });

  it('refuses an object without a pod template', () => {
    const parsed = parseSandbox(sandbox({ worktree: 'wt-1' }));
    expect(!parsed.ok && parsed.error.field).toBe('spec.podTemplate');
  });

  it('refuses a pod template with more labels than the limit', () => {
    const labels = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    const parsed = parseSandbox(sandbox({ podTemplate: { ...podTemplate, metadata: { labels } } }));
    expect(!parsed.ok && parsed.error.field).toBe('spec.podTemplate.metadata.labels');
  });
});

describe('SessionReference spec', () => {
  it('requires a parent session for a subagent (enforced by the API server through CEL)', () => {
    const rules = sessionReferenceSpecSchema.meta()?.['x-kubernetes-validations'] as { rule: string }[];
    expect(rules.map((r) => r.rule)).toContain("self.role != 'Subagent' || has(self.parentSession)");
  });

  it('refuses a session id with characters outside the identifier alphabet', () => {
    const result = sessionReferenceSpecSchema.safeParse({
      sandbox: 'sbx',
      session: 'bad id',
      route: 'r',
      role: 'Root',
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['session']);
  });
});
