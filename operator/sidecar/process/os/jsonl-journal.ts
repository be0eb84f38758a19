/**
 * The real Journal: one JSON object per line, appended and fsync'd before `append` resolves, on a volume
 * only the sidecar mounts (so the agent cannot forge entries). Appends are serialized; a crash can tear
 * at most the last line, which replay skips and counts.
 */
import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { z } from 'zod';
import { errnoOf, SidecarError } from '../../contract/errors.ts';
import type { Journal } from './ports.ts';

export function createJsonlJournal<E>(
  path: string,
  schema: z.ZodType<E>,
): Journal<E> & { close(): Promise<void> } {
  let handle: FileHandle | undefined;
  let tail: Promise<unknown> = Promise.resolve();
  /** Once closed (shutdown), appends are refused instead of silently reopening the file. */
  let closed = false;
  let appends = 0;

  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
  const appendHandle = async (): Promise<FileHandle> => {
    if (handle === undefined) {
      await mkdir(dirname(path), { recursive: true });
      handle = await open(path, 'a', 0o600);
    }
    return handle;
  };
  const closeHandle = async (): Promise<void> => {
    const h = handle;
    handle = undefined;
    await h?.close();
  };

  return {
    append(entry) {
      return serial(async () => {
        if (closed) throw new SidecarError('JournalAppendFailed', `${path} is closed`, { cause: entry });
        try {
          const h = await appendHandle();
          await h.write(`${JSON.stringify(entry)}\n`);
          await h.sync();
          appends += 1;
        } catch (error) {
          throw new SidecarError('JournalAppendFailed', path, { cause: error });
        }
      });
    },
    replay() {
      return serial(async () => {
        let text: string;
        try {
          text = await readFile(path, 'utf8');
        } catch (error) {
          if (errnoOf(error) === 'ENOENT') return { entries: [], skipped: 0 };
          throw new SidecarError('JournalReplayFailed', path, { cause: error });
        }
        const entries: E[] = [];
        let skipped = 0;
        for (const line of text.split('\n')) {
          if (line.trim() === '') continue;
          const parsed = schema.safeParse(parseJson(line));
          if (parsed.success) entries.push(parsed.data);
          else skipped += 1;
        }
        return { entries, skipped };
      });
    },
    rewrite(entries) {
      return serial(async () => {
        const temporary = `${path}.compact`;
        try {
          await closeHandle();
          await mkdir(dirname(path), { recursive: true });
          const h = await open(temporary, 'w', 0o600);
          try {
            await h.write(entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
            await h.sync();
          } finally {
            await h.close();
          }
          await rename(temporary, path);
          appends = 0;
          const dir = await open(dirname(path), 'r');
          try {
            await dir.sync();
          } finally {
            await dir.close();
          }
        } catch (error) {
          throw new SidecarError('JournalRewriteFailed', path, { cause: error });
        }
      });
    },
    appendsSinceRewrite: () => appends,
    close() {
      closed = true;
      return serial(closeHandle);
    },
  };
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    // A torn last line after a crash: replay counts it as skipped (the caller logs the count).
    return undefined;
  }
}
