import { describe, expect, it } from 'vitest';
import {
  findEscapees,
  judgeEscapee,
  judgeGroup,
  MARKER_READS_MAX,
  markersToRead,
  type GroupFacts,
} from '../../../operator/sidecar/process/retire/group-judge.ts';
import type { MarkerRead } from '../../../operator/sidecar/contract/marker.ts';
import type { ProcStat } from '../../../operator/sidecar/contract/proc-stat.ts';
import type { ShellGroup } from '../../../operator/sidecar/process/ledger/shell-group.ts';

const group: ShellGroup = { shell: 'sh1', session: 'child', turn: 't1', pgid: 100, leaderStartTime: 500 };
const ours: MarkerRead = { kind: 'Marked', marker: { session: 'child', turn: 't1', shell: 'sh1' } };
const theirs: MarkerRead = { kind: 'Marked', marker: { session: 'parent', turn: 't9', shell: 'other' } };
const proc = (pid: number, startTime: number, pgrp = 100, state = 'S'): ProcStat => ({
  pid,
  comm: 'sh',
  state,
  ppid: 1,
  pgrp,
  session: pgrp,
  startTime,
});
const facts = (over: Partial<GroupFacts>): GroupFacts => ({
  group,
  members: [],
  known: new Set(),
  markers: new Map(),
  protectedPids: new Set([1]),
  ...over,
});

describe('judgeGroup', () => {
  it('calls a group with no live member empty', () => {
    expect(judgeGroup(facts({}))).toEqual({ kind: 'Empty' });
  });

  it('refuses a group that holds a protected process, whatever else is true', () => {
    const f = facts({
      members: [proc(100, 500), proc(7, 600)],
      known: new Set(['100:500']),
      protectedPids: new Set([7]),
    });
    expect(judgeGroup(f)).toEqual({ kind: 'Protected', pids: [7] });
  });

  it('calls the group recycled when its number is led by a newer process, even one carrying our marker', () => {
    const f = facts({ members: [proc(100, 900)], markers: new Map([[100, ours]]) });
    expect(judgeGroup(f)).toEqual({
      kind: 'Recycled',
      reason: 'group id 100 is led by a process started at tick 900, not 500',
      members: [{ pid: 100, startTime: 900 }],
    });
    expect(markersToRead(f)).toEqual([]);
  });

  it('proves the group by continuity with a member known from an earlier survey, reading no environment', () => {
    const f = facts({ members: [proc(100, 500), proc(101, 510)], known: new Set(['100:500']) });
    expect(markersToRead(f)).toEqual([]);
    expect(judgeGroup(f)).toMatchObject({
      kind: 'Proven',
      by: 'Continuity',
      witnesses: [
        { pid: 100, startTime: 500 },
        { pid: 101, startTime: 510 },
      ],
      members: [
        { pid: 100, startTime: 500 },
        { pid: 101, startTime: 510 },
      ],
    });
  });

  it('proves a group whose leader exited by a later member carrying the shell’s marker', () => {
    const f = facts({ members: [proc(101, 510), proc(102, 520)] });
    expect(markersToRead(f)).toEqual([101, 102]);
    const markers = new Map<number, MarkerRead>([
      [101, { kind: 'Unmarked' }],
      [102, ours],
    ]);
    expect(judgeGroup({ ...f, markers })).toMatchObject({
      kind: 'Proven',
      by: 'Marker',
      witnesses: [
        { pid: 102, startTime: 520 },
        { pid: 101, startTime: 510 },
      ],
    });
  });

  it('puts stopped members first among the witnesses, since they outlive SIGTERM until SIGCONT', () => {
    const f = facts({ members: [proc(100, 500), proc(101, 510, 100, 'T')], known: new Set(['100:500']) });
    expect(judgeGroup(f)).toMatchObject({
      witnesses: [
        { pid: 101, startTime: 510 },
        { pid: 100, startTime: 500 },
      ],
    });
  });

  it('does not accept a marked member that started before the leader', () => {
    const f = facts({ members: [proc(99, 400)] });
    expect(markersToRead(f)).toEqual([]);
    expect(judgeGroup({ ...f, markers: new Map([[99, ours]]) })).toMatchObject({ kind: 'Unproven' });
  });

  it('calls the group recycled when its members carry another shell’s marker', () => {
    const f = facts({ members: [proc(101, 510)], markers: new Map([[101, theirs]]) });
    expect(judgeGroup(f)).toEqual({
      kind: 'Recycled',
      reason: "members of group 100 carry another shell's marker (pid 101)",
      members: [{ pid: 101, startTime: 510 }],
    });
  });

  it('leaves a group unproven when the environments cannot be read, and says so', () => {
    const f = facts({
      members: [proc(101, 510)],
      markers: new Map([[101, { kind: 'Unreadable', reason: 'EACCES' }]]),
    });
    expect(judgeGroup(f)).toEqual({
      kind: 'Unproven',
      reason: 'members of group 100 have environments the sidecar may not read',
      members: [{ pid: 101, startTime: 510 }],
    });
  });
});

describe('judgeGroup, the proof and its witnesses', () => {
  it('proves a group by its leader’s own marker when no earlier survey knows it: the leader started no later than itself', () => {
    const f = facts({ members: [proc(100, 500)] });
    expect(markersToRead(f)).toEqual([100]);
    expect(judgeGroup({ ...f, markers: new Map([[100, ours]]) })).toMatchObject({
      kind: 'Proven',
      by: 'Marker',
      witnesses: [{ pid: 100, startTime: 500 }],
    });
  });

  it('reads the markers of the earliest started members first, at most MARKER_READS_MAX, none read twice', () => {
    expect(markersToRead(facts({ members: [proc(103, 530), proc(101, 510), proc(102, 520)] }))).toEqual([
      101, 102, 103,
    ]);
    expect(
      markersToRead(
        facts({ members: [proc(103, 530), proc(101, 510)], markers: new Map([[101, { kind: 'Unmarked' }]]) }),
      ),
    ).toEqual([103]);
    const many = Array.from({ length: MARKER_READS_MAX + 10 }, (_, i) => proc(2000 - i, 510 + i));
    const toRead = markersToRead(facts({ members: many }));
    expect(toRead).toHaveLength(MARKER_READS_MAX);
    expect(toRead[0]).toBe(2000);
    expect(toRead.at(-1)).toBe(2000 - (MARKER_READS_MAX - 1));
  });

  it('puts members in tracing stop (t) first too', () => {
    const f = facts({ members: [proc(100, 500), proc(101, 510, 100, 't')], known: new Set(['100:500']) });
    expect(judgeGroup(f)).toMatchObject({
      witnesses: [
        { pid: 101, startTime: 510 },
        { pid: 100, startTime: 500 },
      ],
    });
  });

  it('re-checks at most 16 witnesses before a signal, and knows every member', () => {
    const members = [proc(100, 500), ...Array.from({ length: 20 }, (_, i) => proc(200 + i, 600 + i))];
    const judged = judgeGroup(facts({ members, known: new Set(['100:500']) }));
    const identities = members.map(({ pid, startTime }) => ({ pid, startTime }));
    expect(judged).toEqual({
      kind: 'Proven',
      by: 'Continuity',
      witnesses: identities.slice(0, 16),
      members: identities,
    });
  });

  it('judges members whose marker the survey did not read as carrying none', () => {
    const f = facts({
      members: [proc(101, 510), proc(102, 520)],
      markers: new Map([[101, { kind: 'Unmarked' }]]),
    });
    expect(judgeGroup(f)).toEqual({
      kind: 'Unproven',
      reason: "no member of group 100 carries the shell's marker",
      members: [
        { pid: 101, startTime: 510 },
        { pid: 102, startTime: 520 },
      ],
    });
    expect(judgeGroup({ ...f, markers: new Map([[102, ours]]) })).toMatchObject({ kind: 'Proven' });
    expect(judgeGroup({ ...f, markers: new Map([[102, theirs]]) })).toMatchObject({ kind: 'Recycled' });
  });

  it('says the environments could not be read when any one member’s could not', () => {
    const f = facts({
      members: [proc(101, 510), proc(102, 520)],
      markers: new Map<number, MarkerRead>([
        [101, { kind: 'Unmarked' }],
        [102, { kind: 'Unreadable', reason: 'EACCES' }],
      ]),
    });
    expect(judgeGroup(f)).toMatchObject({
      kind: 'Unproven',
      reason: 'members of group 100 have environments the sidecar may not read',
    });
  });
});

describe('judgeEscapee', () => {
  const escapee = { pid: 300, startTime: 700, marker: { session: 'child', turn: 't1' } };
  it('proves an escapee by its pid and start time', () => {
    expect(judgeEscapee(escapee, proc(300, 700, 300), ours, new Set())).toEqual({
      kind: 'Proven',
      witnesses: [{ pid: 300, startTime: 700 }],
    });
  });

  it('calls it gone when the pid is absent, reused or a zombie', () => {
    expect(judgeEscapee(escapee, undefined, { kind: 'Gone' }, new Set())).toEqual({ kind: 'Empty' });
    expect(judgeEscapee(escapee, proc(300, 701, 300), ours, new Set())).toEqual({ kind: 'Empty' });
    expect(judgeEscapee(escapee, proc(300, 700, 300, 'Z'), ours, new Set())).toEqual({ kind: 'Empty' });
  });

  it('lets another session’s marker veto, but not a cleared environment', () => {
    expect(judgeEscapee(escapee, proc(300, 700, 300), theirs, new Set())).toEqual({
      kind: 'Recycled',
      reason: "pid 300 now carries another session's marker",
    });
    const marked = (session: string, turn: string): MarkerRead => ({
      kind: 'Marked',
      marker: { session, turn },
    });
    expect(judgeEscapee(escapee, proc(300, 700, 300), marked('child', 't2'), new Set())).toMatchObject({
      kind: 'Recycled',
    });
    expect(judgeEscapee(escapee, proc(300, 700, 300), marked('parent', 't1'), new Set())).toMatchObject({
      kind: 'Recycled',
    });
    expect(judgeEscapee(escapee, proc(300, 700, 300), { kind: 'Unmarked' }, new Set())).toMatchObject({
      kind: 'Proven',
    });
  });

  it('never signals a protected process, even one still carrying the marker', () => {
    expect(judgeEscapee(escapee, proc(300, 700, 300), ours, new Set([300]))).toEqual({
      kind: 'Protected',
      pids: [300],
    });
  });
});

describe('findEscapees', () => {
  it('finds live marked processes of the scope outside the retired groups, and nothing else', () => {
    const processes = [
      { stat: proc(300, 700, 300), marker: ours },
      { stat: proc(301, 700, 100), marker: ours },
      { stat: proc(302, 700, 302), marker: theirs },
      { stat: proc(303, 700, 303), marker: { kind: 'Unmarked' } as const },
      { stat: proc(304, 700, 304, 'Z'), marker: ours },
      {
        stat: proc(305, 700, 305),
        marker: { kind: 'Marked', marker: { session: 'child', turn: 't2' } } as const,
      },
      { stat: proc(306, 700, 306), marker: ours },
      {
        stat: proc(307, 700, 307),
        marker: { kind: 'Marked', marker: { session: 'parent', turn: 't1' } } as const,
      },
    ];
    const found = findEscapees(
      { session: 'child', turns: new Set(['t1']) },
      processes,
      new Set([100]),
      new Set([306]),
    );
    expect(found).toEqual([{ pid: 300, startTime: 700, marker: ours.marker }]);
  });
});
