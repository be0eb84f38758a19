/**
 * The claim watch (cache/held-claims.ts): which sandbox names have a claim holding our finalizer, and which
 * sandbox each event or relist brings back to the queue.
 */
import { describe, expect, it } from 'vitest';
import { EXCLUSIVITY_FINALIZER, LABELS } from '../../../operator/api/names.ts';
import { HeldClaims } from '../../../operator/controller/cache/held-claims.ts';

const claim = (
  name: string,
  sandbox: string | undefined,
  finalizers: string[] = [EXCLUSIVITY_FINALIZER],
) => ({
  metadata: {
    namespace: 'ns',
    name,
    ...(sandbox === undefined ? {} : { labels: { [LABELS.sandbox]: sandbox } }),
    finalizers,
  },
});

function watched() {
  const queued: string[] = [];
  return { held: new HeldClaims((key) => queued.push(key)), queued };
}

describe('the claim watch', () => {
  it('holds a sandbox while any of its claims keeps our finalizer, and brings it on each change', () => {
    const { held, queued } = watched();
    held.apply('ADDED', claim('workspace-a', 'a'));
    held.apply('ADDED', claim('data-a', 'a'));
    expect(held.holds('ns/a')).toBe(true);
    held.apply('MODIFIED', claim('workspace-a', 'a', []));
    expect(held.holds('ns/a')).toBe(true);
    held.apply('DELETED', claim('data-a', 'a'));
    expect(held.holds('ns/a')).toBe(false);
    expect(queued).toEqual(['ns/a', 'ns/a', 'ns/a', 'ns/a']);
  });

  it('brings every sandbox held before or after a relist (a restart lists no gone Sandbox: this does)', () => {
    const { held, queued } = watched();
    held.apply('ADDED', claim('workspace-gone', 'gone'));
    queued.length = 0;
    held.replace([claim('workspace-b', 'b'), claim('workspace-c', 'c', [])]);
    expect(queued.sort()).toEqual(['ns/b', 'ns/gone']);
    expect([held.holds('ns/b'), held.holds('ns/c'), held.holds('ns/gone')]).toEqual([true, false, false]);
  });

  it('ignores what is not a sandbox claim', () => {
    const { held, queued } = watched();
    held.apply('ADDED', claim('other', undefined));
    held.apply('ADDED', null);
    expect(queued).toEqual([]);
  });
});
