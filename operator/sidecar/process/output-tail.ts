/**
 * Tails a shell's output file for match notices. The path is never taken from a request: it is
 * `<outputDir>/<shell id>.log`, where the client's spawn helper sends the shell's stdout and stderr. The
 * file is opened without following a symlink and read only if it is a regular file, so an agent cannot
 * point the (privileged) sidecar at another file. Only complete lines are matched: a half-printed line
 * never becomes a match.
 */
import { constants } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { errnoOf } from '../contract/errors.ts';

const READ_MAX = 64 * 1024;
const PARTIAL_MAX = 4 * 1024;

export interface OutputTail {
  /** Complete lines written since the last call; empty when the file is absent or not a regular file. */
  nextLines(shell: string): Promise<readonly string[]>;
  /** Forgets the shell and removes its output file (a retired subagent shell's output is forgotten too). */
  forget(shell: string): Promise<void>;
}

interface TailState {
  offset: number;
  partial: string;
  readonly decoder: StringDecoder;
}

export function createOutputTail(dir: string): OutputTail {
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
        if (!info.isFile() || info.size <= state.offset) return [];
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
