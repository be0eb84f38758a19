/**
 * The e2e tests' leftover groups are ended whatever their leader did: a shell that ignores Ctrl-C is killed
 * after the grace, and a child that outlived its leader is ended with the group.
 */
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { endLeftoverGroups, spawnGroup } from '../../harness/process-groups.ts';

const alive = (group: number) => {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
};

describe('endLeftoverGroups', () => {
  it('ends a group that honours Ctrl-C, and kills one that ignores it after the grace', async () => {
    const polite = spawnGroup('sh', ['-c', 'exec sleep 60'], { env: process.env });
    // A background job of a non-interactive shell ignores SIGINT, as a stuck control plane may.
    const stubborn = spawnGroup('sh', ['-c', 'sleep 60 & wait'], { env: process.env });
    const groups = [polite.pid ?? 0, stubborn.pid ?? 0];
    expect(groups.every(alive)).toBe(true);
    const exited = once(polite, 'exit');
    expect((await endLeftoverGroups(1_000)).sort()).toEqual([...groups].sort());
    expect(groups.filter(alive)).toEqual([]);
    expect((await exited)[1]).toBe('SIGINT'); // the polite one went at Ctrl-C, not at the kill
  });

  it('ends a group whose leader is gone but whose child still runs, and leaves nothing for the next test', async () => {
    const leader = spawnGroup('sh', ['-c', 'sleep 60 & echo started'], { env: process.env });
    await once(leader, 'exit');
    const group = leader.pid ?? 0;
    expect(alive(group)).toBe(true); // the backgrounded sleep keeps the group
    expect(await endLeftoverGroups(1_000)).toEqual([group]);
    expect(alive(group)).toBe(false);
    expect(await endLeftoverGroups(1_000)).toEqual([]);
  });
});
