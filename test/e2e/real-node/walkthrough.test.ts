// README.md's "A workspace that outlives its pod", literally (issue 27): the commands of its code block, taken
// from the file and run as printed (bash, from the repository root, the built kubectl on PATH) against the
// `npm start` the quick start tells the user to run, on its real node — write a file, drain the node (the
// drain finishes, the operator moves the pod), uncordon, read the file from the new container; suspend,
// resume, read it again. The quick start's earlier block made the namespace team-a; this test makes it too.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { endLeftoverGroups } from '../../harness/process-groups.ts';
import { requireRealNode } from './node.ts';
import { bash, readmeBlock, startAsUser } from './readme-block.ts';

const HEADING = '### A workspace that outlives its pod';

/** The lines of the first `sh` block under the heading, comments kept (bash drops them). */
const walkthroughCommands = (readme?: string): string[] => readmeBlock(HEADING, readme);

// A test that timed out never ran its own finally: end what it started before the next one starts.
afterEach(async () => {
  await endLeftoverGroups();
}, 60_000);

describe.runIf(inject('clusterKind') === 'local')(
  'the README walkthrough of a workspace that outlives its pod',
  () => {
    it('keeps the file through a drain and a suspension, as printed', { timeout: 900_000 }, async (ctx) => {
      requireRealNode(ctx);
      const commands = walkthroughCommands();
      expect(commands.length).toBeGreaterThan(10);
      expect(commands.some((line) => line.startsWith('kubectl drain 127.0.0.1 '))).toBe(true);
      const started = await startAsUser(ctx);
      const userEnv = started.env;
      expect(started.output()).toContain('Sandbox pods run as real containers on node 127.0.0.1');
      const made = await bash('kubectl create namespace team-a', userEnv);
      expect(made).toMatchObject({ code: 0 });

      // What a failure needs to be understood: each command's output, and the operator's lines about the sandbox.
      ctx.onTestFailed(() => {
        const about = started
          .output()
          .split('\n')
          .filter((l) => l.includes('research-notes') || l.includes('127.0.0.1'));
        console.info(`npm start, about the sandbox and the node:\n${about.slice(-80).join('\n')}`);
      });
      const podUid = async () =>
        (await bash('kubectl get pod research-notes-0 -n team-a -o jsonpath={.metadata.uid}', userEnv))
          .output;
      const outputs: string[] = [];
      const uids: string[] = [];
      for (const line of commands) {
        if (line.startsWith('kubectl drain ')) uids.push(await podUid());
        const result = await bash(line, userEnv);
        console.info(`$ ${line}\n${result.output}`);
        expect({ line, code: result.code, output: result.output }).toMatchObject({ line, code: 0 });
        outputs.push(result.output);
        if (line.startsWith('kubectl uncordon ')) uids.push(await podUid());
      }
      // The drain moved the pod: the one read back is a new pod (a new container on the same claim).
      expect(uids[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(uids[1]).not.toBe(uids[0]);
      const said = (prefix: string) => outputs.filter((_, i) => commands[i]?.startsWith(prefix));
      // The file, read back from the container after the drain's move and after the resume.
      expect(
        said('kubectl exec -n team-a research-notes-0 -c workspace -- cat').map((o) => o.trim()),
      ).toEqual(['draft 1', 'draft 1']);
      expect(said('kubectl drain ')[0]).toContain('node/127.0.0.1 drained');
      const events = said('kubectl get events ')[0] ?? '';
      expect(events).toContain('DrainRescheduling');
      expect(events).toContain('PodRescheduled');
      const suspended = said('kubectl get sbx,pvc ')[0] ?? '';
      expect(suspended).toMatch(/research-notes\s.*Suspended/);
      expect(suspended).toMatch(/workspace-research-notes\s+Bound/);
    });
  },
);
