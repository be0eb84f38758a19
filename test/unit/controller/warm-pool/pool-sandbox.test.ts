import { describe, expect, it } from 'vitest';
import { sandboxTemplateSpecSchema } from '../../../../operator/api/sandbox-template.ts';
import { poolSandbox, poolSandboxName } from '../../../../operator/controller/warm-pool/pool-sandbox.ts';

const template = {
  name: 'python-agent',
  generation: 3,
  spec: sandboxTemplateSpecSchema.parse({
    podTemplate: { spec: { containers: [{ name: 'agent', image: 'python:3.12' }] } },
  }),
};

describe('a pool’s sandbox', () => {
  it('copies the blueprint, is labelled and owned by its pool, and is born holding its deletion', () => {
    const body = poolSandbox({ namespace: 'team-a', name: 'py', uid: 'pool-uid' }, template, 'py-bcdfg');
    expect(body).toEqual({
      apiVersion: 'sandbox.agents.dev/v1alpha1',
      kind: 'Sandbox',
      metadata: {
        name: 'py-bcdfg',
        namespace: 'team-a',
        labels: { 'sandbox.agents.dev/warm-pool': 'py', 'sandbox.agents.dev/template': 'python-agent' },
        annotations: { 'sandbox.agents.dev/template-generation': '3' },
        ownerReferences: [
          {
            apiVersion: 'sandbox.agents.dev/v1alpha1',
            kind: 'SandboxWarmPool',
            name: 'py',
            uid: 'pool-uid',
            controller: true,
          },
        ],
        finalizers: ['sandbox.agents.dev/exclusivity'],
      },
      spec: template.spec,
    });
  });

  it('is named after its pool with five letters drawn from the alphabet', () => {
    expect(poolSandboxName('py', () => 0)).toBe('py-bbbbb');
    expect(poolSandboxName('py', () => 0.999)).toBe('py-99999');
  });
});
