/** One SessionReference per (session, sandbox): its name is derived from both, so a second attach finds the first. */
import { createHash } from 'node:crypto';

export function sessionReferenceName(sandbox: string, session: string): string {
  const digest = createHash('sha256').update(`${sandbox}\n${session}`).digest('hex').slice(0, 16);
  return `${sandbox.slice(0, 40)}-${digest}`;
}
