/**
 * Turns the API server's OpenAPI v3 document of core/v1 into the structural schema of a PodSpec that a CRD
 * can hold (issue 26, #5): every `$ref` resolved inline, the `allOf` wrappers unwrapped, descriptions and the
 * extensions a CRD refuses (patch strategy, unions) dropped, IntOrString and Quantity as
 * `x-kubernetes-int-or-string`. Pure, so a unit test can call it; scripts/pod-spec-schema.ts does the I/O.
 *
 * Defaults are dropped: kube-openapi writes zero values (`""`, `0`, `{}`) on required fields, and a CRD would
 * write every default into every Sandbox (a GitOps tool then sees drift). A CRD needs every list-map key
 * required or defaulted, so a list-map with a key its items do not require (a container's ports, keyed by
 * the defaulted `protocol`) becomes atomic: as the whole template was before, and the pod's own validation
 * still refuses duplicates.
 */

export type JsonSchema = { [key: string]: unknown };

/** The keys a CRD's structural schema may carry that the PodSpec uses; everything else is dropped. */
const KEPT = new Set([
  'type',
  'format',
  'enum',
  'required',
  'properties',
  'items',
  'additionalProperties',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
]);
/** Types the API server's JSON decodes from a number or a string. */
const INT_OR_STRING = new Set([
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString',
  'io.k8s.apimachinery.pkg.api.resource.Quantity',
]);
const REF_PREFIX = '#/components/schemas/';

export class PodSpecExtractError extends Error {
  override readonly name = 'PodSpecExtractError';
}

const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The structural schema of `root` (e.g. `io.k8s.api.core.v1.PodSpec`) in `document`'s components. */
export function extractStructural(document: unknown, root: string): JsonSchema {
  const schemas = isSchema(document) && isSchema(document['components']) ? document['components'] : {};
  const definitions = isSchema(schemas['schemas']) ? schemas['schemas'] : {};
  const lookup = (name: string, trail: readonly string[]): JsonSchema => {
    const found = definitions[name];
    if (!isSchema(found)) throw new PodSpecExtractError(`${name} is not in the OpenAPI document`);
    if (trail.includes(name)) throw new PodSpecExtractError(`${[...trail, name].join(' → ')} is recursive`);
    return found;
  };

  const convert = (node: JsonSchema, trail: readonly string[]): JsonSchema => {
    const ref = referenceOf(node);
    if (ref !== null) {
      if (INT_OR_STRING.has(ref)) return { 'x-kubernetes-int-or-string': true };
      return convert(lookup(ref, trail), [...trail, ref]);
    }
    const out: JsonSchema = {};
    for (const [key, value] of Object.entries(node)) {
      if (!KEPT.has(key)) continue;
      if (key === 'properties' && isSchema(value)) {
        out[key] = Object.fromEntries(
          Object.entries(value).map(([name, child]) => [name, convert(asSchema(child, name), trail)]),
        );
      } else if ((key === 'items' || key === 'additionalProperties') && isSchema(value)) {
        out[key] = convert(value, trail);
      } else {
        out[key] = value;
      }
    }
    if (out['type'] === undefined && out['properties'] !== undefined) out['type'] = 'object';
    if (out['format'] === 'int-or-string') return { 'x-kubernetes-int-or-string': true };
    atomicUnlessKeysRequired(out);
    return out;
  };

  return convert(lookup(root, []), [root]);
}

/** The type a node names: `$ref` itself, or an `allOf` of one `$ref` (how v3 attaches a default to one). */
function referenceOf(node: JsonSchema): string | null {
  const direct = node['$ref'];
  const allOf: unknown = node['allOf'];
  const wrapped: unknown = Array.isArray(allOf) && allOf.length === 1 ? (allOf as unknown[])[0] : undefined;
  const ref = typeof direct === 'string' ? direct : isSchema(wrapped) ? wrapped['$ref'] : undefined;
  if (typeof ref !== 'string') return null;
  if (!ref.startsWith(REF_PREFIX)) throw new PodSpecExtractError(`unsupported $ref ${ref}`);
  return ref.slice(REF_PREFIX.length);
}

function asSchema(value: unknown, name: string): JsonSchema {
  if (!isSchema(value)) throw new PodSpecExtractError(`property ${name} is not a schema`);
  return value;
}

/** Makes a list-map atomic when its items do not require every key (see the file's comment). */
function atomicUnlessKeysRequired(out: JsonSchema): void {
  const keys = out['x-kubernetes-list-map-keys'];
  const items = out['items'];
  if (!Array.isArray(keys) || !isSchema(items)) return;
  const required = Array.isArray(items['required']) ? (items['required'] as unknown[]) : [];
  if (keys.every((key) => required.includes(key))) return;
  delete out['x-kubernetes-list-map-keys'];
  out['x-kubernetes-list-type'] = 'atomic';
}
