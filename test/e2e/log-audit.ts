/**
 * What a clean run logs at warn level or above. An operator's warnings must be things a person should act
 * on, so a clean run may log only the ones listed as expected (each with the reason it is expected); any
 * other is a finding. The figure is printed with the test's output, never asserted as a timing.
 */
export type LogLine = { readonly level: number; readonly msg: string; readonly name?: string };
export type ExpectedWarning = { readonly msg: RegExp; readonly why: string };

const WARN = 40;

/** The structured (pino JSON) lines of `output` at warn level or above; other lines are not logs. */
export function warningsOf(output: string): LogLine[] {
  return output.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      const parsed = JSON.parse(line) as Partial<LogLine>;
      return typeof parsed.level === 'number' && parsed.level >= WARN && typeof parsed.msg === 'string'
        ? [{ level: parsed.level, msg: parsed.msg, ...(parsed.name ? { name: parsed.name } : {}) }]
        : [];
    } catch {
      return []; // a log line cut by the end of the output: not a warning to judge
    }
  });
}

/** The figure a clean run prints: how many warn and error lines, and how many were expected. */
export function auditFigure(lines: readonly LogLine[], expected: readonly ExpectedWarning[]): string {
  const warn = lines.filter((line) => line.level < 50).length;
  const error = lines.length - warn;
  const listed = lines.filter((line) => expected.some((each) => each.msg.test(line.msg))).length;
  return `${warn} warn and ${error} error line(s), ${listed} of them expected`;
}

export const unexpectedWarnings = (lines: readonly LogLine[], expected: readonly ExpectedWarning[]) =>
  lines.filter((line) => !expected.some((each) => each.msg.test(line.msg)));
