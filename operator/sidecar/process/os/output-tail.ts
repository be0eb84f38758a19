/**
 * Tails a shell's output file for match notices. The path is never taken from a request: it is
 * `<outputDir>/<shell id>.log`, where the client's spawn helper sends the shell's stdout and stderr. The
 * file is opened without following a symlink and read only if it is a regular file, so an agent cannot
 * point the (privileged) sidecar at another file. Only complete lines are matched: a half-printed line
 * never becomes a match. Each file is bounded (issue 12): once it has grown past `maxBytes` and been read,
 * it is truncated in place — the spawn helper opens it O_APPEND, so the shell keeps writing at the new end
 * — and a retired shell's file is removed, so output never fills the volume and gets the pod evicted. A root
 * (Privileged) sidecar writes the agent's file with DAC_OVERRIDE; in a pod made before DAC_OVERRIDE replaced
 * DAC_READ_SEARCH (an upgrade keeps running pods; a moved image tag can run this code there) it may not, and
 * first takes ownership of the file.
 */
import { constants } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { errnoOf } from '../../contract/errors.ts';

const READ_MAX = 64 * 1024;
const PARTIAL_MAX = 4 * 1024;
/** Default bound of one output file. */
export const OUTPUT_FILE_MAX_BYTES = 8 * 1024 * 1024;

export interface OutputTail {
  /** Complete lines written since the last call; empty when the file is absent or not a regular file. */
  nextLines(shell: string): Promise<readonly string[]>;
  /** Truncates the shell's file once it exceeds the bound (for shells without a match literal). */
  bound(shell: string): Promise<void>;
  /** Forgets the shell and removes its output file (a retired subagent shell's output is forgotten too). */
  forget(shell: string): Promise<void>;
}

interface TailState {
  offset: number;
  partial: string;
  readonly decoder: StringDecoder;
}

export function createOutputTail(dir: string, maxBytes = OUTPUT_FILE_MAX_BYTES): OutputTail {
  const states = new Map<string, TailState>();
  const pathOf = (shell: string) => `${dir}/${shell}.log`;
  return {
    async nextLines(shell) {
      let handle;
      try {
        handle = await open(pathOf(shell), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      } catch (error) {
        const code = errnoOf(error);
        // Absent (the host kept the output elsewhere) or a symlink (refused): nothing to match.
        if (code === 'ENOENT' || code === 'ELOOP') return [];
        throw error;
      }
      try {
        const info = await handle.stat();
        const state = states.get(shell) ?? { offset: 0, partial: '', decoder: new StringDecoder('utf8') };
        states.set(shell, state);
        if (!info.isFile()) return [];
        if (info.size > maxBytes) {
          // Lines past the cap are not matched: skipping them beats a file that fills the volume.
          await truncateInPlace(pathOf(shell));
          state.offset = 0;
          state.partial = '';
          return [];
        }
        if (info.size < state.offset) state.offset = 0; // truncated by someone else
        if (info.size <= state.offset) return [];
        const length = Math.min(READ_MAX, info.size - state.offset);
        const buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, state.offset);
        state.offset += bytesRead;
        const text = state.partial + state.decoder.write(buffer.subarray(0, bytesRead));
        const lines = text.split('\n');
        const rest = lines.pop() ?? '';
        state.partial = rest.length > PARTIAL_MAX ? rest.slice(-PARTIAL_MAX) : rest;
        return lines;
      } finally {
        await handle.close();
      }
    },
    async bound(shell) {
      try {
        const handle = await open(
          pathOf(shell),
          constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
        );
        let size: number;
        try {
          size = (await handle.stat()).size;
        } finally {
          await handle.close();
        }
        if (size <= maxBytes) return;
        await truncateInPlace(pathOf(shell));
        const state = states.get(shell);
        if (state !== undefined) {
          state.offset = 0;
          state.partial = '';
        }
      } catch (error) {
        const code = errnoOf(error);
        if (code === 'ENOENT' || code === 'ELOOP') return;
        throw error;
      }
    },
    async forget(shell) {
      states.delete(shell);
      try {
        await unlink(pathOf(shell));
      } catch (error) {
        if (errnoOf(error) !== 'ENOENT') throw error;
      }
    },
  };
}

/** Truncates a regular, singly linked file without following a symlink (the agent owns the directory). */
async function truncateInPlace(path: string): Promise<void> {
  let handle;
  try {
    handle = await open(path, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (errnoOf(error) !== 'EACCES' || process.getuid?.() !== 0) throw error;
    // A root sidecar without DAC_OVERRIDE (a pod made before it was added) may not write the agent's 0640 file.
    await takeOwnership(path);
    handle = await open(path, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  }
  try {
    const info = await handle.stat();
    if (info.isFile() && info.nlink === 1) await handle.truncate(0);
  } finally {
    await handle.close();
  }
}

/**
 * Makes root the owner of the agent's output file (CAP_CHOWN), keeping its group and mode, so the agent's
 * group still reads it and its shell's open O_APPEND descriptor keeps writing. Only a regular file with one
 * link, checked on the descriptor that is chowned: never a file the agent linked or swapped in.
 */
async function takeOwnership(path: string): Promise<void> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (info.isFile() && info.nlink === 1) await handle.chown(0, info.gid);
  } finally {
    await handle.close();
  }
}
