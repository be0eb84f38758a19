/**
 * `kubectl explain` covers every field: for each field of spec and status, at every depth, the API server
 * serves the description written in operator/api, as kubectl shows it.
 */
import { describe, expect, it } from 'vitest';
import { sandboxCrd, sessionReferenceCrd } from '../../../operator/api/crd.ts';
import { kubectlOk } from '../../harness/kube.ts';

type Schema = { description?: string; properties?: Record<string, Schema>; items?: Schema };

/**
 * Below it, the vendored PodSpec (operator/api/pod-spec.schema.json) carries no descriptions: they would make
 * the CRD too large to apply; `kubectl explain pod.spec` describes those fields.
 */
const VENDORED = 'spec.podTemplate.spec';

/** [dotted path below the kind, description] for every field of spec and status. */
function fields(node: Schema, path: string): [string, string][] {
  const here: [string, string][] = [];
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const childPath = path ? `${path}.${name}` : name;
    here.push([childPath, child.description ?? '']);
    // kubectl explain walks into array items through the array field's own name.
    if (childPath !== VENDORED) here.push(...fields(child.items ?? child, childPath));
  }
  return here;
}

const words = (text: string) => text.replace(/\s+/g, ' ').trim();

describe.each([
  ['sandboxes', sandboxCrd],
  ['sessionreferences', sessionReferenceCrd],
])('kubectl explain %s', (plural, crd) => {
  const schema = crd.spec.versions[0]!.schema.openAPIV3Schema as Schema;
  const documented = ['spec', 'status'].flatMap((top) => [
    [top, schema.properties![top]!.description ?? ''] as [string, string],
    ...fields(schema.properties![top]!, top),
  ]);

  it('has fields to explain', () => {
    expect(documented.length).toBeGreaterThan(15);
  });

  it.each(documented)(`${plural}.%s shows its description`, async (path, description) => {
    expect(description).not.toBe('');
    const output = await kubectlOk(['explain', `${plural}.${path}`]);
    expect(words(output)).toContain(words(description));
  });
});
