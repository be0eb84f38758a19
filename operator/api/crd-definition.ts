/**
 * One CustomResourceDefinition from the zod schemas of its spec and status (crd.ts lists them all).
 */
import { z } from 'zod';
import { CATEGORY, GROUP, VERSION } from './names.ts';
import { toStructural } from './structural.ts';

export type Names = { kind: string; plural: string; singular: string; shortName: string };
export type PrinterColumn = {
  name: string;
  type: string;
  jsonPath: string;
  description: string;
  priority?: number;
};
export type Rule = { rule: string; message: string };

const jsonSchema = (schema: z.ZodType) =>
  toStructural(z.toJSONSchema(schema, { io: 'input', target: 'openapi-3.0' }));

export function definition(options: {
  names: Names;
  description: string;
  spec: z.ZodType;
  /** Absent for a kind nobody observes (a SandboxTemplate): no status field, no status subresource. */
  status?: z.ZodType;
  /** A last change to the spec's schema, past what zod can say (the Sandbox's vendored PodSpec). */
  refineSpec?: (schema: Record<string, unknown>) => Record<string, unknown>;
  /** What a GET returns as status before anyone wrote one (a structural default, applied on read). */
  statusDefault?: Record<string, unknown>;
  columns: PrinterColumn[];
  selectableFields: string[];
  rootRules: Rule[];
  /**
   * The /scale subresource: for kinds that own pods (the disruption controller reads their replicas) and for
   * pools (autoscalers set their replicas).
   */
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
}) {
  const { names } = options;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${names.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        kind: names.kind,
        listKind: `${names.kind}List`,
        plural: names.plural,
        singular: names.singular,
        shortNames: [names.shortName],
        categories: [CATEGORY],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: {
            ...(options.status ? { status: {} } : {}),
            ...(options.scale ? { scale: options.scale } : {}),
          },
          additionalPrinterColumns: options.columns,
          selectableFields: options.selectableFields.map((jsonPath) => ({ jsonPath })),
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: options.description,
              required: ['spec'],
              properties: {
                apiVersion: {
                  type: 'string',
                  description: 'APIVersion of this representation of the object.',
                },
                kind: { type: 'string', description: 'Kind of the REST resource this object represents.' },
                metadata: { type: 'object' },
                spec: (options.refineSpec ?? ((schema) => schema))(jsonSchema(options.spec)),
                ...(options.status
                  ? {
                      status: {
                        ...jsonSchema(options.status),
                        ...(options.statusDefault ? { default: options.statusDefault } : {}),
                      },
                    }
                  : {}),
              },
              ...(options.rootRules.length > 0 ? { 'x-kubernetes-validations': options.rootRules } : {}),
            },
          },
        },
      ],
    },
  };
}

export const age: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description: 'Time since creation.',
};
