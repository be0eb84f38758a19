/**
 * The series a PromQL expression reads: every metric name in it, found by dropping what is not one
 * (strings, label matchers, grouping clauses, ranges, functions, keywords, numbers). Enough for the chart's
 * own rules and dashboard, which a test checks against the operator's series.
 */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'inf',
  'nan',
]);

export function seriesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*(\()?)/g)) {
    const [name, call] = [match[0], match[1]];
    if (call !== undefined || KEYWORDS.has(name.toLowerCase())) continue;
    // A duration such as 5m or 1e-9's exponent is not a name.
    if (/^\d/.test(name) || /[0-9.]e$/i.test(stripped.slice(Math.max(0, match.index - 1), match.index + 1)))
      continue;
    names.add(name);
  }
  return [...names];
}
