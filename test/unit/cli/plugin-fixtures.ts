/**
 * Sandboxes, references, pods and Events for the plugin's unit tests, parsed like the plugin parses them:
 * the shared builders (test/unit/builders.ts) with the plugin tests' namespace and names.
 */
import { EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
import { sandbox as sandboxBuilder, sessionReference } from '../builders.ts';
import type { Sandbox, SessionReference } from '../../../operator/api/objects.ts';
import { parseSandbox, parseSessionReference, type Parsed } from '../../../operator/api/parse.ts';
import type { EventSummary, PodSummary } from '../../../operator/cli/plugin/ports.ts';

export const NOW = new Date('2026-03-01T12:00:00Z');
export const minutesAgo = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000);

export type SandboxFixture = {
  name?: string;
  worktree?: string;
  deleting?: boolean;
  status?: Record<string, unknown>;
  shellReaper?: { enabled: boolean; gracePeriodSeconds?: number };
};

export function sandbox(options: SandboxFixture = {}): Sandbox {
  const built = sandboxBuilder(options.name ?? 'sbx-a')
    .inNamespace('team-a')
    .finalized()
    .withoutWorktree()
    .withSpec({
      replicas: 1,
      podTemplate: { spec: { containers: [{ name: 'agent', image: 'ghcr.io/example/agent-runtime:1' }] } },
      ...(options.worktree === undefined ? {} : { worktree: options.worktree }),
      ...(options.shellReaper ? { shellReaper: { gracePeriodSeconds: 5, ...options.shellReaper } } : {}),
    })
    .withStatus(options.status);
  if (options.deleting) built.deleting(minutesAgo(5).toISOString());
  const parsed = parseSandbox(built.build());
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}

export type ReferenceFixture = {
  worktree?: string;
  state?: 'Attached' | 'Detached';
  role?: 'Root' | 'Subagent' | 'Board' | 'Ticket';
  session?: string;
  status?: Record<string, unknown>;
};

export const rawReference = (name: string, options: ReferenceFixture = {}): Record<string, unknown> =>
  sessionReference(name)
    .inNamespace('team-a')
    .of('sbx-a')
    .fromWorktree(options.worktree)
    .as(options.role ?? 'Root')
    .inState(options.state ?? 'Attached')
    .forSession(options.session ?? `workspace_${name}`)
    .withStatus(options.status)
    .raw();

export const parsedReference = (name: string, options: ReferenceFixture = {}): Parsed<SessionReference> =>
  parseSessionReference(rawReference(name, options));

export function reference(name: string, options: ReferenceFixture = {}): SessionReference {
  const parsed = parsedReference(name, options);
  if (!parsed.ok) throw parsed.error;
  return parsed.value;
}

/** A reference whose spec.role is not one of the enum values. */
export const malformedReference = (name: string): Parsed<SessionReference> =>
  parseSessionReference({
    ...rawReference(name),
    spec: { ...(rawReference(name)['spec'] as object), role: 'Janitor' },
  });

export const pod = (name: string, options: { held?: boolean; deleting?: boolean } = {}): PodSummary => ({
  name,
  phase: 'Running',
  deleting: options.deleting ?? false,
  finalizers: options.held === false ? [] : [EXCLUSIVITY_FINALIZER],
});

export const event = (reason: string, message: string, minutes: number, type = 'Normal'): EventSummary => ({
  type,
  reason,
  message,
  count: 1,
  lastSeen: minutesAgo(minutes),
});
