// The PodSpec a Sandbox's template holds (issue 26, #5): extracted from the API server's OpenAPI into a
// structural schema, bounded everywhere, with the zod schema's own rules on top.
import { describe, expect, it } from 'vitest';
import { bounded, overlaid } from '../../../operator/api/pod-template-bounds.ts';
import { extractStructural, PodSpecExtractError } from '../../../scripts/pod-spec-extract.ts';
import { TEMPLATE_STRING_MAX, TEMPLATE_TEXT_MAX } from '../../../operator/api/limits.ts';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const document = (schemas: Record<string, unknown>) => ({ components: { schemas } });

describe('extracting the PodSpec from the OpenAPI document', () => {
  const openapi = document({
    Pod: {
      description: 'a pod',
      type: 'object',
      required: ['containers'],
      properties: {
        containers: {
          type: 'array',
          items: { default: {}, allOf: [ref('Container')] },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'name',
        },
        overhead: {
          type: 'object',
          additionalProperties: ref('io.k8s.apimachinery.pkg.api.resource.Quantity'),
        },
      },
    },
    Container: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', default: '', description: 'the name' },
        ports: {
          type: 'array',
          items: { allOf: [ref('Port')] },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
        },
      },
      'x-kubernetes-unions': [{}],
    },
    Port: {
      type: 'object',
      required: ['containerPort'],
      properties: {
        containerPort: { type: 'integer', format: 'int32', default: 0 },
        protocol: { type: 'string', default: 'TCP' },
        target: { allOf: [ref('io.k8s.apimachinery.pkg.util.intstr.IntOrString')] },
      },
    },
  });

  it('resolves every reference, keeps the structure and drops descriptions, defaults and patch hints', () => {
    expect(extractStructural(openapi, 'Pod')).toEqual({
      type: 'object',
      required: ['containers'],
      properties: {
        containers: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name'],
            properties: {
              name: { type: 'string' },
              ports: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['containerPort'],
                  properties: {
                    containerPort: { type: 'integer', format: 'int32' },
                    protocol: { type: 'string' },
                    target: { 'x-kubernetes-int-or-string': true },
                  },
                },
                // A key the items do not require (protocol) cannot key a CRD's list-map without a default.
                'x-kubernetes-list-type': 'atomic',
              },
            },
          },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
        },
        overhead: { type: 'object', additionalProperties: { 'x-kubernetes-int-or-string': true } },
      },
    });
  });

  it('fails, naming the type, on a missing or recursive reference', () => {
    expect(() => extractStructural(openapi, 'Missing')).toThrow(PodSpecExtractError);
    const loop = document({ A: { type: 'object', properties: { b: ref('A') } } });
    expect(() => extractStructural(loop, 'A')).toThrow('A → A is recursive');
  });
});

describe('the bounds', () => {
  const container = {
    type: 'object',
    properties: {
      name: { type: 'string' },
      args: { type: 'array', items: { type: 'string' } },
      env: {
        type: 'array',
        items: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } } },
      },
      resources: { type: 'object', additionalProperties: { 'x-kubernetes-int-or-string': true } },
      volumeMounts: { type: 'array', items: { type: 'object', properties: {} } },
    },
  };

  it('bound every string, list and map: text a container runs or reads more loosely than names', () => {
    const out = bounded({ type: 'object', properties: { containers: { type: 'array', items: container } } });
    const c = (out['properties'] as Record<string, { items: { properties: Record<string, never> } }>)[
      'containers'
    ]!.items.properties;
    expect(c['name']).toEqual({ type: 'string', maxLength: TEMPLATE_STRING_MAX });
    expect(c['args']).toMatchObject({ maxItems: 256, items: { maxLength: TEMPLATE_TEXT_MAX } });
    expect(c['env']).toMatchObject({
      maxItems: 256,
      items: {
        properties: { name: { maxLength: TEMPLATE_STRING_MAX }, value: { maxLength: TEMPLATE_TEXT_MAX } },
      },
    });
    expect(c['resources']).toMatchObject({ maxProperties: 64, additionalProperties: { maxLength: 4096 } });
    expect(c['volumeMounts']).toMatchObject({ maxItems: 64 });
  });

  it("keep the zod schema's own rules on top, and its pass-through no more", () => {
    const zod = {
      type: 'object',
      required: ['containers'],
      properties: {
        containers: {
          type: 'array',
          maxItems: 16,
          items: {
            type: 'object',
            required: ['image'],
            properties: { name: { type: 'string', maxLength: 63 } },
          },
        },
      },
      'x-kubernetes-preserve-unknown-fields': true,
    };
    const base = {
      type: 'object',
      properties: {
        containers: {
          type: 'array',
          maxItems: 64,
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string', maxLength: 4096 } },
          },
        },
        hostname: { type: 'string' },
      },
    };
    expect(overlaid(base, zod)).toEqual({
      type: 'object',
      required: ['containers'],
      properties: {
        containers: {
          type: 'array',
          maxItems: 16,
          items: {
            type: 'object',
            required: ['name', 'image'],
            properties: { name: { type: 'string', maxLength: 63 } },
          },
        },
        hostname: { type: 'string' },
      },
    });
  });
});
