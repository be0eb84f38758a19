/**
 * What the plugin prints from the cluster is written by others (agent hosts write SessionReferences,
 * anyone with `create events` writes Event messages), so it is made inert before it reaches a terminal:
 * control characters (ESC and CSI sequences, carriage returns, newlines that would forge report lines) and
 * bidirectional overrides become visible escapes such as `\x1b`. Pure.
 */

// C0, DEL, C1, line and paragraph separators, bidi embeddings, overrides and isolates.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escape = (char: string): string => {
  const code = char.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** One value for a text report: every unprintable character escaped. */
export const printable = (text: string): string => text.replace(UNPRINTABLE, escape);

/** A view with every string in it made printable (Dates and numbers kept), for the text renderers. */
export function printableView<T>(value: T): T {
  return deepPrintable(value) as T;
}

function deepPrintable(value: unknown): unknown {
  if (typeof value === 'string') return printable(value);
  if (Array.isArray(value)) return value.map(deepPrintable);
  if (value !== null && typeof value === 'object' && !(value instanceof Date))
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [printable(key), deepPrintable(inner)]),
    );
  return value;
}

/**
 * JSON and double-quoted YAML escape C0 themselves; DEL, C1 (a lone U+009B is a CSI on many terminals)
 * and the bidi controls they leave as they are, inside strings only, where a \u escape means the same
 * character. (So YAML is written with every string double-quoted.)
 */
const LEFT_BY_SERIALIZERS = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
export const inertSerialized = (text: string): string =>
  text.replace(LEFT_BY_SERIALIZERS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
