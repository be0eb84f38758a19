// README.md's "Warm pools and claims", literally (issue 28): the commands of its code block, taken from the
// file and run as printed against the `npm start` the quick start tells the user to run, on its real node —
// a pool of three fills, a claim binds one of its ready sandboxes (Warm) with the session's reference from
// the bind, the plugin lists it, and deleting the claim forgets the reference and releases the sandbox.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { endLeftoverGroups } from '../../harness/process-groups.ts';
import { eventually, pending } from '../../integration/controller/operator.ts';
import { requireRealNode } from './node.ts';
import { bash, readmeBlock, startAsUser } from './readme-block.ts';

const HEADING = '### Warm pools and claims';

afterEach(async () => {
  await endLeftoverGroups();
}, 60_000);

describe.runIf(inject('clusterKind') === 'local')('the README walkthrough of a warm pool and a claim', () => {
  it(
    'binds a ready pool sandbox to the claim, and releases it with the claim, as printed',
    { timeout: 900_000 },
    async (ctx) => {
      requireRealNode(ctx);
      const commands = readmeBlock(HEADING);
      expect(commands.length).toBeGreaterThanOrEqual(6);
      expect(commands.some((line) => line.startsWith('kubectl delete sbc '))).toBe(true);
      const started = await startAsUser(ctx);
      const env = started.env;
      expect(await bash('kubectl create namespace team-a', env)).toMatchObject({ code: 0 });
      ctx.onTestFailed(() => {
        const about = started
          .output()
          .split('\n')
          .filter((l) => l.includes('python-pool') || l.includes('workspace-123'));
        console.info(`npm start, about the pool and the claim:\n${about.slice(-80).join('\n')}`);
      });
      const json = async (line: string) =>
        JSON.parse((await bash(line, env)).output) as Record<string, unknown>;
      let bound = '';
      const outputs: string[] = [];
      for (const line of commands) {
        if (line.startsWith('kubectl delete sbc ')) {
          // Before the claim goes: what it bound, and the session's reference to it, which the bind wrote.
          const claim = await json('kubectl get sbc workspace-123 -n team-a -o json');
          const status = claim['status'] as { sandbox?: string; reference?: string; launchType?: string };
          expect(status).toMatchObject({
            launchType: 'Warm',
            sandbox: expect.stringMatching(/^python-pool-/),
          });
          bound = status.sandbox ?? '';
          const reference = await json(
            `kubectl get sessionreference ${status.reference ?? '-'} -n team-a -o json`,
          );
          expect(reference['spec']).toMatchObject({
            sandbox: bound,
            session: 'workspace_123',
            state: 'Attached',
          });
        }
        const result = await bash(line, env);
        console.info(`$ ${line}\n${result.output}`);
        expect({ line, code: result.code, output: result.output }).toMatchObject({ line, code: 0 });
        outputs.push(result.output);
      }
      const said = (prefix: string) => outputs.filter((_, i) => commands[i]?.startsWith(prefix))[0] ?? '';
      expect(said('kubectl get sbc ')).toMatch(/workspace-123\s+python-pool\s.*python-pool-\S+\s+Warm/);
      expect(said('PATH=$PWD/bin:$PATH kubectl sandbox claims')).toContain('workspace-123');
      // The claim's sandbox is released (no other session attached: Exclusive), and the pool is full again.
      await eventually(
        `Sandbox ${bound} released`,
        async () => {
          const left = await bash(`kubectl get sbx ${bound} -n team-a --ignore-not-found -o name`, env);
          return left.output.trim() === '' ? true : pending({ left: left.output });
        },
        180_000,
      );
      const pool = await json('kubectl get sbwp python-pool -n team-a -o json');
      expect((pool['spec'] as { replicas?: number }).replicas).toBe(3);
    },
  );
});
