// The real node's cgroup subtree: one directory per hierarchy, named for the run. kubelet gets it as
// its cgroupRoot (pods go below it), and containerd and kubelet are moved into its `runtime` child right
// after they start, so containerd's shims and everything they run inherit it; the teardown then finds
// every process of the node there, whoever its parent is.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CGROUP_FS = '/sys/fs/cgroup';

/** Each mounted hierarchy: the cgroup2 root alone, or every v1 controller (and the hybrid unified tree). */
export function hierarchies(): string[] {
  if (existsSync(join(CGROUP_FS, 'cgroup.controllers'))) return [CGROUP_FS];
  return readdirSync(CGROUP_FS)
    .map((name) => join(CGROUP_FS, name))
    .filter((dir) => existsSync(join(dir, 'cgroup.procs')));
}

/** Creates `<hierarchy>/<name>/runtime` everywhere; a new cpuset must be given its parent's cpus and mems. */
export function createNodeCgroups(name: string): void {
  for (const hierarchy of hierarchies()) {
    for (const dir of [join(hierarchy, name), join(hierarchy, name, 'runtime')]) {
      mkdirSync(dir, { recursive: true });
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        const own = join(dir, file);
        if (!existsSync(own) || readFileSync(own, 'utf8').trim() !== '') continue;
        writeFileSync(own, readFileSync(join(dir, '..', file), 'utf8').trim());
      }
    }
  }
}

/** Moves `pid` into the runtime cgroup of every hierarchy but memory (it keeps the caller's limit). */
export function adoptIntoNodeCgroups(name: string, pid: number): void {
  for (const hierarchy of hierarchies()) {
    if (hierarchy.endsWith('/memory')) continue;
    writeFileSync(join(hierarchy, name, 'runtime', 'cgroup.procs'), String(pid));
  }
}

/** Pids still inside the node's subtree (the teardown's witness, and the tests'). */
export function nodeCgroupPids(name: string): number[] {
  const pids = new Set<number>();
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const line of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n'))
      if (line !== '') pids.add(Number(line));
    for (const entry of readdirSync(dir, { withFileTypes: true }))
      if (entry.isDirectory()) walk(join(dir, entry.name));
  };
  for (const hierarchy of hierarchies()) walk(join(hierarchy, name));
  return [...pids];
}

export function nodeCgroupsExist(name: string): boolean {
  return hierarchies().some((hierarchy) => existsSync(join(hierarchy, name)));
}
