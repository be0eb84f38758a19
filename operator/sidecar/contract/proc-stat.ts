/**
 * Parsing `/proc/<pid>/stat` (proc(5)). Pure: the text comes from the ProcessTable port.
 *
 * `comm` (field 2) is in parentheses and may itself contain spaces and `)`, so fields are read after the
 * LAST `)` (proc(5)). `pgrp`, `session` and `starttime` are not ptrace-gated, so they are
 * readable for every process in the pod's shared PID namespace.
 */

/** One process as the kernel reports it. `startTime` is field 22: clock ticks after boot. */
export interface ProcStat {
  readonly pid: number;
  readonly comm: string;
  /** One letter: R, S, D, Z, T, t, X, x, I, … */
  readonly state: string;
  readonly ppid: number;
  readonly pgrp: number;
  readonly session: number;
  readonly startTime: number;
}

export type StatParse =
  { readonly ok: true; readonly stat: ProcStat } | { readonly ok: false; readonly reason: string };

// Offsets into the fields that follow ") ": state is field 3, so field n sits at index n - 3.
const STATE = 0;
const PPID = 1;
const PGRP = 2;
const SESSION = 3;
const START_TIME = 19;

function integerField(fields: readonly string[], index: number): number | undefined {
  const raw = fields[index];
  if (raw === undefined || !/^-?\d+$/.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Parses one stat line. A truncated or garbled line is a value with a reason, never an exception. */
export function parseProcStat(text: string): StatParse {
  const open = text.indexOf(' (');
  const close = text.lastIndexOf(')');
  if (open <= 0 || close < open) return { ok: false, reason: 'no "(comm)" in stat line' };
  const pid = Number(text.slice(0, open));
  if (!Number.isSafeInteger(pid) || pid <= 0) return { ok: false, reason: 'pid is not a positive integer' };
  const fields = text
    .slice(close + 1)
    .trim()
    .split(' ');
  const state = fields[STATE];
  const ppid = integerField(fields, PPID);
  const pgrp = integerField(fields, PGRP);
  const session = integerField(fields, SESSION);
  const startTime = integerField(fields, START_TIME);
  if (state === undefined || !/^[A-Za-z]$/.test(state)) return { ok: false, reason: 'state is not a letter' };
  if (ppid === undefined || pgrp === undefined || session === undefined || startTime === undefined) {
    return { ok: false, reason: 'stat line is truncated or a numeric field is malformed' };
  }
  return {
    ok: true,
    stat: { pid, comm: text.slice(open + 2, close), state, ppid, pgrp, session, startTime },
  };
}

/** Zombies (Z) and dead tasks (X, x) have ended: they count as gone, never as members to wait for. */
export function isLive(stat: Pick<ProcStat, 'state'>): boolean {
  return stat.state !== 'Z' && stat.state !== 'X' && stat.state !== 'x';
}

/** A process identity that survives pid reuse: the pid plus its start time in ticks. */
export interface ProcessIdentity {
  readonly pid: number;
  readonly startTime: number;
}

export const identityKey = (p: ProcessIdentity): string => `${p.pid}:${p.startTime}`;
