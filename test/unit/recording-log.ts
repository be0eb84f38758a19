/** A pino logger whose entries a test reads: what was decided, and why, is part of the behaviour. */
import { pino, type Logger } from 'pino';

export function recordingLog(): { readonly log: Logger; readonly entries: Record<string, unknown>[] } {
  const entries: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'info' },
    { write: (line: string) => void entries.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { log, entries };
}
