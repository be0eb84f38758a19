/**
 * The PodSpec a Sandbox's template holds in the CRD (issue 26, #5): the API server's own structural schema
 * (pod-spec.schema.json, vendored by `npm run pod-spec-schema`) with a bound on every string, list and map,
 * and the zod schema's own rules (sandbox.ts: at least one and at most 16 containers, each named and with an
 * image) laid over it. With it the API server prunes (or, under strict field validation, refuses) a field no
 * PodSpec has, and refuses a megabyte in any one field, naming the field and the limit.
 */
import vendored from './pod-spec.schema.json' with { type: 'json' };
import {
  TEMPLATE_LIST_MAX,
  TEMPLATE_LONG_LIST_MAX,
  TEMPLATE_MAP_MAX,
  TEMPLATE_STRING_MAX,
  TEMPLATE_TEXT_MAX,
} from './limits.ts';

type JsonSchema = { [key: string]: unknown };

const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Where a bound other than the default applies, by the field's path (`.containers[].env[].value`). */
const STRING_BOUNDS: readonly (readonly [RegExp, number])[] = [
  [/\.env\[\]\.value$/, TEMPLATE_TEXT_MAX],
  [/\.(command|args)\[\]$/, TEMPLATE_TEXT_MAX],
];
const LIST_BOUNDS: readonly (readonly [RegExp, number])[] = [
  [/\.(env|command|args)$/, TEMPLATE_LONG_LIST_MAX],
];

const boundFor = (bounds: readonly (readonly [RegExp, number])[], path: string, fallback: number): number =>
  bounds.find(([pattern]) => pattern.test(path))?.[1] ?? fallback;

/** `node` with maxLength, maxItems and maxProperties wherever a string, list or map has none. */
export function bounded(node: JsonSchema, path = ''): JsonSchema {
  const out: JsonSchema = { ...node };
  const properties = out['properties'];
  if (isSchema(properties)) {
    out['properties'] = Object.fromEntries(
      Object.entries(properties).map(([name, child]) => [
        name,
        isSchema(child) ? bounded(child, `${path}.${name}`) : child,
      ]),
    );
  }
  if (isSchema(out['items'])) out['items'] = bounded(out['items'], `${path}[]`);
  if (isSchema(out['additionalProperties'])) {
    out['additionalProperties'] = bounded(out['additionalProperties'], `${path}{}`);
    out['maxProperties'] ??= TEMPLATE_MAP_MAX;
  }
  if (out['type'] === 'string' || out['x-kubernetes-int-or-string'] === true) {
    out['maxLength'] ??= boundFor(STRING_BOUNDS, path, TEMPLATE_STRING_MAX);
  }
  if (out['type'] === 'array') out['maxItems'] ??= boundFor(LIST_BOUNDS, path, TEMPLATE_LIST_MAX);
  return out;
}

/**
 * `base` with `overlay`'s rules on top, key by key: properties and items merge, `required` is the union,
 * every other key of the overlay wins. The overlay's `x-kubernetes-preserve-unknown-fields` (the zod schema
 * still lets the operator read fields it does not name) is dropped: the vendored schema names them all.
 */
export function overlaid(base: JsonSchema, overlay: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    if (key === 'x-kubernetes-preserve-unknown-fields') continue;
    const current = out[key];
    if (key === 'properties' && isSchema(value) && isSchema(current)) {
      out[key] = Object.fromEntries(
        [...new Set([...Object.keys(current), ...Object.keys(value)])].map((name) => {
          const own = current[name];
          const extra = value[name];
          return [name, isSchema(own) && isSchema(extra) ? overlaid(own, extra) : (extra ?? own)];
        }),
      );
    } else if (key === 'items' && isSchema(value) && isSchema(current)) {
      out[key] = overlaid(current, value);
    } else if (key === 'required' && Array.isArray(value) && Array.isArray(current)) {
      out[key] = [...new Set([...(current as unknown[]), ...(value as unknown[])])];
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** A Sandbox spec's schema (zod's output) with spec.podTemplate.spec the bounded, vendored PodSpec. */
export function withPodSpec(spec: JsonSchema): JsonSchema {
  const template = child(child(spec, 'podTemplate'), 'spec');
  const podSpec = overlaid(bounded(vendored.schema), template);
  const podTemplate = child(spec, 'podTemplate');
  return {
    ...spec,
    properties: {
      ...(spec['properties'] as JsonSchema),
      podTemplate: {
        ...podTemplate,
        properties: { ...(podTemplate['properties'] as JsonSchema), spec: podSpec },
      },
    },
  };
}

function child(node: JsonSchema, name: string): JsonSchema {
  const properties = node['properties'];
  const found = isSchema(properties) ? properties[name] : undefined;
  if (!isSchema(found))
    throw new Error(`the Sandbox schema has no ${name}: sandbox.ts and this file disagree`);
  return found;
}
