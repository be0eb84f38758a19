/** Every conformance scenario. A scenario added to one of these lists runs for every client in DRIVERS. */
import type { Scenario } from '../context.ts';
import { claims } from './claims.ts';
import { handshake } from './handshake.ts';
import { lifecycle } from './lifecycle.ts';
import { reports } from './reports.ts';
import { squatting } from './squatting.ts';
import { suspension } from './suspension.ts';
import { unreadable } from './unreadable.ts';

export const SCENARIOS: readonly Scenario[] = [
  ...handshake,
  ...squatting,
  ...unreadable,
  ...lifecycle,
  ...reports,
  ...suspension,
  ...claims,
];
