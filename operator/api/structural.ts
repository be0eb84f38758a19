/**
 * Turns zod's JSON Schema output into a Kubernetes structural schema: no `additionalProperties: false`
 * (the API server prunes or, with strict field validation, rejects unknown fields itself), no
 * `propertyNames` (a map's key bounds are CEL rules, written where the map is: sandbox.ts), and integer
 * formats instead of JavaScript's safe-integer bounds.
 *
 * The CRD must refuse whatever the parser refuses (issue 25, #8): an object the API server stores and the
 * operator cannot read is left untouched. So a date-time keeps zod's pattern beside the `date-time` format,
 * which alone admits forms zod refuses (no offset, a space for the `T`, a lower-case `z`).
 */

type JsonSchema = { [key: string]: unknown };

const INT32_MAX = 2_147_483_647;
const INT32_MIN = -2_147_483_648;

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function toStructural(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' || key === 'propertyNames') continue;
    if (key === 'additionalProperties' && value === false) continue;
    if (key === 'properties' && isSchema(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, isSchema(v) ? toStructural(v) : v]),
      );
    } else if ((key === 'items' || key === 'additionalProperties') && isSchema(value)) {
      out[key] = toStructural(value);
    } else {
      out[key] = value;
    }
  }
  if (out['x-kubernetes-preserve-unknown-fields'] === true) {
    delete out['additionalProperties'];
    if (isSchema(out['properties']) && Object.keys(out['properties']).length === 0) delete out['properties'];
  }
  if (out['type'] === 'integer') normaliseInteger(out);
  return out;
}

function normaliseInteger(node: JsonSchema): void {
  const max = node['maximum'];
  const min = node['minimum'];
  if (max === INT32_MAX || max === Number.MAX_SAFE_INTEGER) delete node['maximum'];
  if (min === INT32_MIN || min === Number.MIN_SAFE_INTEGER) delete node['minimum'];
  const fitsInt32 =
    (typeof max !== 'number' || max <= INT32_MAX) && (typeof min !== 'number' || min >= INT32_MIN);
  node['format'] = fitsInt32 && max !== undefined && max !== Number.MAX_SAFE_INTEGER ? 'int32' : 'int64';
}
