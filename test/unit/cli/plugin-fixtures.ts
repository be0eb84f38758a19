/** Sandboxes, references, pods and Events for the plugin's unit tests, parsed like the plugin parses them. */
import { API_VERSION, EXCLUSIVITY_FINALIZER } from '../../../operator/api/names.ts';
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
  const parsed = parseSandbox({
    apiVersion: API_VERSION,
    kind: 'Sandbox',
    metadata: {
      name: options.name ?? 'sbx-a',
      namespace: 'team-a',
      ...(options.deleting ? { deletionTimestamp: minutesAgo(5).toISOString() } : {}),
      finalizers: [EXCLUSIVITY_FINALIZER],
    },
    spec: {
      ...(options.worktree === undefined ? {} : { worktree: options.worktree }),
      podTemplate: { spec: { containers: [{ name: 'agent', image: 'ghcr.io/example/agent-runtime:1' }] } },
      ...(options.shellReaper ? { shellReaper: options.shellReaper } : {}),
    },
    ...(options.status ? { status: options.status } : {}),
  });
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

export function rawReference(name: string, options: ReferenceFixture = {}): Record<string, unknown> {
  const role = options.role ?? 'Root';
  return {
    apiVersion: API_VERSION,
    kind: 'SessionReference',
    metadata: { name, namespace: 'team-a' },
    spec: {
      sandbox: 'sbx-a',
      session: options.session ?? `workspace_${name}`,
      ...(options.worktree === undefined ? {} : { worktree: options.worktree }),
      route: `shared-control-v1/${name}`,
      role,
      ...(role === 'Subagent' ? { parentSession: 'workspace_root' } : {}),
      state: options.state ?? 'Attached',
    },
    ...(options.status ? { status: options.status } : {}),
  };
}

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
