import { describe, expect, it } from 'vitest';
import type { Parsed } from '../../../operator/api/parse.ts';
import { parseSandbox } from '../../../operator/api/parse.ts';
import type { Sandbox, SessionReference } from '../../../operator/api/objects.ts';
import { PluginError } from '../../../operator/cli/plugin/errors.ts';
import type { PluginPorts } from '../../../operator/cli/plugin/ports.ts';
import { runCommand } from '../../../operator/cli/plugin/run.ts';
import { NOW, parsedReference, sandbox } from './plugin-fixtures.ts';

/** Ports over fixed objects; `reads` records what was asked, to show the plugin asks only for its sandbox. */
function fakePorts(objects: { sandboxes?: Parsed<Sandbox>[]; references?: Parsed<SessionReference>[] }) {
  const reads: string[] = [];
  const nameOf = <T extends { metadata: { name: string } }>(p: Parsed<T>) =>
    p.ok ? p.value.metadata.name : p.error.objectKey.split('/')[1];
  const named = <T extends { metadata: { name: string } }>(list: Parsed<T>[] | undefined, name: string) =>
    list?.find((p) => nameOf(p) === name);
  const ports: PluginPorts = {
    objects: {
      sandbox: (namespace, name) => {
        reads.push(`sandbox ${namespace}/${name}`);
        return Promise.resolve(named(objects.sandboxes, name));
      },
      reference: (namespace, name) => {
        reads.push(`reference ${namespace}/${name}`);
        return Promise.resolve(named(objects.references, name));
      },
      references: (namespace, name) => {
        reads.push(`references of ${namespace}/${name}`);
        return Promise.resolve(objects.references ?? []);
      },
      pods: () => Promise.resolve([]),
    },
    events: { events: () => Promise.resolve([]) },
  };
  return { ports, reads };
}

const ok = (value: Sandbox): Parsed<Sandbox> => ({ ok: true, value });

describe('running a plugin command', () => {
  it('fails naming the Sandbox that does not exist', async () => {
    const { ports } = fakePorts({});
    const run = runCommand({ kind: 'why', sandbox: 'missing' }, 'team-a', 'text', ports, NOW);
    await expect(run).rejects.toThrow(new PluginError('NotFound', 'Sandbox team-a/missing not found'));
  });

  it('fails naming the SessionReference that does not exist', async () => {
    const { ports } = fakePorts({});
    await expect(
      runCommand({ kind: 'shells', reference: 'sref-x' }, 'team-a', 'text', ports, NOW),
    ).rejects.toThrow('SessionReference team-a/sref-x not found');
  });

  it('fails naming the malformed field of a Sandbox it cannot read', async () => {
    const broken = parseSandbox({
      apiVersion: 'sandbox.agents.dev/v1alpha1',
      kind: 'Sandbox',
      metadata: { name: 'sbx-a', namespace: 'team-a' },
      spec: {},
    });
    const { ports } = fakePorts({ sandboxes: [broken] });
    const run = runCommand(
      { kind: 'refs', sandbox: 'sbx-a', foreignOnly: false },
      'team-a',
      'text',
      ports,
      NOW,
    );
    await expect(run).rejects.toThrow(/Sandbox team-a\/sbx-a is malformed: spec\.podTemplate/);
  });

  it('answers in JSON with the same view the text shows', async () => {
    const { ports, reads } = fakePorts({
      sandboxes: [ok(sandbox({ worktree: 'wt-1' }))],
      references: [parsedReference('other', { worktree: 'wt-2' })],
    });
    const text = await runCommand(
      { kind: 'refs', sandbox: 'sbx-a', foreignOnly: false },
      'team-a',
      'json',
      ports,
      NOW,
    );
    expect(JSON.parse(text)).toMatchObject({
      sandbox: { namespace: 'team-a', name: 'sbx-a', worktree: 'wt-1' },
      rows: [{ name: 'other', foreign: true }],
      counts: { total: 1, foreign: 1 },
    });
    expect(reads).toEqual(['sandbox team-a/sbx-a', 'references of team-a/sbx-a']);
  });
});
