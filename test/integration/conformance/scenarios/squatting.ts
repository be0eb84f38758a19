/**
 * A squatted reference name (issue 26, item 8): the name of a session's reference is derived from (sandbox,
 * session), so anyone with create rights can pre-create it with other fixed fields. An attach that re-attached
 * it anyway would make the session count as the squatter's worktree (own: the sandbox destroyable under it)
 * or for another sandbox (nowhere). The attach compares the fixed fields, fails naming the one that differs,
 * and leaves the object as it found it.
 */
import { expect } from 'vitest';
import { sessionReferenceName } from '../../../../operator/client/names.ts';
import { createReference, createSandbox, getReference } from '../../controller/fixtures.ts';
import type { Scenario } from '../context.ts';
import { attachArgs } from './helpers.ts';

export const squatting: readonly Scenario[] = [
  {
    name: 'an attach to a name pre-created with another worktree fails naming spec.worktree, writing nothing',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('squat-worktree');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1' });
      const name = sessionReferenceName(sandbox, 'workspace_s');
      // The squatter claims the victim's worktree is the sandbox's own: the session would count as own.
      await createReference(namespace, name, {
        sandbox,
        session: 'workspace_s',
        worktree: 'wt-1',
        state: 'Detached',
      });
      const before = await getReference(namespace, name);
      const refused = await context.host().fails('attach', attachArgs(namespace, sandbox, 'workspace_s'));
      expect(refused).toMatchObject({
        kind: 'SessionReferenceConflict',
        name,
        field: 'worktree',
        requested: 'wt-9',
        found: 'wt-1',
      });
      const after = await getReference(namespace, name);
      expect(after?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
      expect(after?.spec).toMatchObject({ state: 'Detached', worktree: 'wt-1' });
    },
  },
  {
    name: 'an attach to a name pre-created for another sandbox fails naming spec.sandbox',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('squat-sandbox');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1' });
      const name = sessionReferenceName(sandbox, 'workspace_s');
      // Counted for another sandbox, the session would protect this one nowhere.
      await createReference(namespace, name, {
        sandbox: `${sandbox}-other`,
        session: 'workspace_s',
        worktree: 'wt-9',
      });
      const refused = await context.host().fails('attach', attachArgs(namespace, sandbox, 'workspace_s'));
      expect(refused).toMatchObject({
        kind: 'SessionReferenceConflict',
        field: 'sandbox',
        requested: sandbox,
        found: `${sandbox}-other`,
      });
      expect((await getReference(namespace, name))?.spec.sandbox).toBe(`${sandbox}-other`);
    },
  },
  {
    name: 'an attach to a name pre-created with no worktree fails naming spec.worktree, found null',
    async run(context) {
      const { namespace } = context;
      const sandbox = context.name('squat-none');
      await createSandbox(namespace, sandbox, { worktree: 'wt-1' });
      const name = sessionReferenceName(sandbox, 'workspace_s');
      await createReference(namespace, name, { sandbox, session: 'workspace_s' });
      const refused = await context.host().fails('attach', attachArgs(namespace, sandbox, 'workspace_s'));
      expect(refused).toMatchObject({ kind: 'SessionReferenceConflict', field: 'worktree', found: null });
    },
  },
];
