/**
 * What the ledger records of a shell: its group as registered, and an escapee (a marked process found
 * outside every retired group). Shared by the journal, the retire and registration, so it lives at the
 * bottom: retire/group-judge.ts judges these, it does not define them.
 */
import type { Marker } from '../../contract/marker.ts';
import type { ProcessIdentity } from '../../contract/proc-stat.ts';

/** A shell process group as registered: the host spawned `bash -c …` detached, so pid = pgid = sid. */
export interface ShellGroup {
  readonly shell: string;
  readonly session: string;
  readonly turn: string;
  readonly pgid: number;
  readonly leaderStartTime: number;
  /** The leader's parent at registration (the agent host): never signalled while it is that process. */
  readonly hostPid?: number;
  /** The host's start time (ticks): a host pid protects only while it names that process. */
  readonly hostStartTime?: number;
  /** A literal a line of the shell's output must contain to publish a match notice. */
  readonly match?: string;
}

export const shellMarker = (group: ShellGroup): Required<Marker> => ({
  session: group.session,
  turn: group.turn,
  shell: group.shell,
});

/** A marked process outside every retired group: found by the marker scan, signalled on its own. */
export interface Escapee extends ProcessIdentity {
  readonly marker: Marker;
}
