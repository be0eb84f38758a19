/**
 * In-memory binding ports with the API server's rules that matter here: a JSON Patch whose tests fail is Lost
 * (the claim label present, the sandbox deleting or fenced, another uid), a create of an existing name is Lost
 * (sandboxes) or Exists (references), deletes check the uid and, given one, the resourceVersion.
 */
import type { JsonPatchOp } from '../../../../operator/controller/finalizer.ts';
import type {
  BindingPorts,
  StoredReference,
  TemplateRead,
} from '../../../../operator/controller/binding/ports.ts';
import {
  bindingSandboxOf,
  type BindingSandbox,
  type ClaimStatus,
} from '../../../../operator/controller/binding/records.ts';

type Event = { reason: string; type: string; message: string };

export class FakeCluster {
  readonly sandboxes = new Map<string, BindingSandbox>();
  readonly references = new Map<
    string,
    {
      uid: string;
      resourceVersion: string;
      raw: { metadata: { labels?: Record<string, string> }; spec: Record<string, unknown> };
    }
  >();
  readonly pools = new Map<string, { uid: string; templateName?: string; deleting?: boolean }>();
  readonly templates = new Map<string, TemplateRead>();
  readonly statuses: ClaimStatus[] = [];
  readonly patches: JsonPatchOp[][] = [];
  /** The binding patches sent, landed or not. */
  readonly bindings: JsonPatchOp[][] = [];
  readonly events: Event[] = [];
  readonly log: string[] = [];
  /** Called before each binding patch lands: a test's concurrent writer. */
  beforeBind: (sandbox: string) => void = () => undefined;
  /** Reference deletes still to answer 409 (a conflict): nothing deleted. */
  referenceDeletesToLose = 0;
  /** What the fence read answers, by sandbox; the sandbox itself when unset. */
  readonly fenceOf = new Map<string, unknown>();
  claimFinalizers: string[] = [];
  /** Consistent LISTs of a claim's sandboxes. */
  sandboxLists = 0;
  private version = 100;

  next(): string {
    this.version += 1;
    return String(this.version);
  }

  ports(): BindingPorts {
    return {
      events: {
        record: (_target, type, reason, message) => void this.events.push({ type, reason, message }),
      },
      claims: {
        patchMetadata: (_claim, ops) => {
          this.patches.push([...ops]);
          this.log.push('claim:patch');
          const added = ops.find((op) => op.op === 'add');
          if (added)
            this.claimFinalizers = Array.isArray(added.value)
              ? (added.value as string[])
              : [...this.claimFinalizers, String(added.value)];
          else this.claimFinalizers = [];
          return Promise.resolve('Written');
        },
        writeStatus: (_claim, status) => {
          this.statuses.push(status);
          this.log.push('claim:status');
          return Promise.resolve();
        },
      },
      sandboxes: {
        listOfClaim: (_ns, claim) => {
          this.sandboxLists += 1;
          return Promise.resolve([...this.sandboxes.values()].filter((s) => s.claim === claim));
        },
        bind: (sandbox, ops) => {
          this.bindings.push([...ops]);
          this.beforeBind(sandbox.name);
          const stored = this.sandboxes.get(sandbox.name);
          if (stored === undefined) return Promise.resolve({ kind: 'Gone' } as const);
          const uid = ops.find((op) => op.path === '/metadata/uid');
          if (uid?.op === 'test' && uid.value !== stored.uid)
            return Promise.resolve({ kind: 'Lost' } as const);
          const tests = (suffix: string) => ops.some((op) => op.op === 'test' && op.path.endsWith(suffix));
          // The binding's fence: the patch holds only on a sandbox neither deleting nor fenced.
          if (!tests('/metadata/deletionTimestamp') || !tests('~1cleanup-fence'))
            throw new Error('a binding patch must test both fences');
          if (stored.claim !== undefined || stored.deleting || stored.fenced)
            return Promise.resolve({ kind: 'Lost' } as const);
          const claim = ops.find((op) => op.op === 'add');
          const updated = {
            ...stored,
            claim: String(claim?.op === 'add' ? claim.value : ''),
            owners: [],
            resourceVersion: this.next(),
          };
          this.sandboxes.set(sandbox.name, updated);
          this.log.push(`sandbox:bind:${sandbox.name}`);
          return Promise.resolve(updated);
        },
        create: (namespace, body) => {
          const sandbox = bindingSandboxOf(body);
          if (sandbox === undefined || this.sandboxes.has(sandbox.name))
            return Promise.resolve({ kind: 'Lost' } as const);
          const created = { ...sandbox, namespace, uid: `${sandbox.name}-uid`, resourceVersion: this.next() };
          this.sandboxes.set(created.name, created);
          this.log.push(`sandbox:create:${created.name}`);
          return Promise.resolve(created);
        },
        delete: (sandbox) => {
          const stored = this.sandboxes.get(sandbox.name);
          if (stored?.uid !== sandbox.uid) return Promise.resolve(false);
          this.sandboxes.set(sandbox.name, { ...stored, deleting: true });
          this.log.push(`sandbox:delete:${sandbox.name}`);
          return Promise.resolve(true);
        },
      },
      reads: {
        readRaw: (_ns, name) => {
          const fence = this.fenceOf.get(name);
          if (fence !== undefined) return Promise.resolve({ kind: 'Json', body: fence });
          const stored = this.sandboxes.get(name);
          if (stored === undefined) return Promise.resolve({ kind: 'Gone' });
          return Promise.resolve({
            kind: 'Json',
            body: { metadata: { name, ...(stored.deleting ? { deletionTimestamp: 't' } : {}) } },
          });
        },
      },
      references: {
        create: (_ns, body) => {
          const raw = body as {
            metadata: { name: string; labels?: Record<string, string> };
            spec: Record<string, unknown>;
          };
          const stored = this.references.get(raw.metadata.name);
          if (stored)
            return Promise.resolve({
              kind: 'Exists',
              stored: { name: raw.metadata.name, uid: stored.uid, raw: stored.raw },
            });
          const uid = `${raw.metadata.name}-uid-${this.next()}`;
          const resourceVersion = this.next();
          this.references.set(raw.metadata.name, { uid, resourceVersion, raw });
          this.log.push(`reference:create:${String(raw.spec['sandbox'])}`);
          return Promise.resolve({ kind: 'Created', uid, resourceVersion });
        },
        listOfClaim: (_ns, claim) =>
          Promise.resolve(
            [...this.references.entries()]
              .filter(([, ref]) => ref.raw.metadata.labels?.['sandbox.agents.dev/sandbox-claim'] === claim)
              .map(([name, ref]): StoredReference => ({ name, uid: ref.uid, raw: ref.raw })),
          ),
        delete: (_ns, reference) => {
          const stored = this.references.get(reference.name);
          if (stored !== undefined && this.referenceDeletesToLose > 0) {
            this.referenceDeletesToLose -= 1;
            return Promise.resolve(false);
          }
          if (stored?.uid !== reference.uid) return Promise.resolve(false);
          if (reference.resourceVersion !== undefined && reference.resourceVersion !== stored.resourceVersion)
            return Promise.resolve(false);
          this.references.delete(reference.name);
          this.log.push(`reference:delete:${String(stored.raw.spec['sandbox'])}`);
          return Promise.resolve(true);
        },
      },
      blueprints: {
        readPool: (_ns, name) => {
          const pool = this.pools.get(name);
          this.log.push(`pool:read:${name}`);
          return Promise.resolve(
            pool && { uid: pool.uid, templateName: pool.templateName, deleting: pool.deleting ?? false },
          );
        },
        readTemplate: (_ns, name) => Promise.resolve(this.templates.get(name)),
      },
    };
  }
}
