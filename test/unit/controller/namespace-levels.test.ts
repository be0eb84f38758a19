/** The namespace PodSecurity level cache the pod builder reads (issue 12): what the watch says, and changes. */
import { describe, expect, it } from 'vitest';
import {
  NamespaceLevels,
  namespaceLevelResource,
} from '../../../operator/controller/cache/namespace-levels.ts';
import {
  PrivilegedReaperNamespaces,
  privilegedReaperResource,
} from '../../../operator/controller/cache/privileged-reaper-namespaces.ts';
import { podSecurityLevelOf } from '../../../operator/sidecar/injection/mode.ts';

const ENFORCE = 'pod-security.kubernetes.io/enforce';
const ns = (name: string, level?: string) => ({
  metadata: { name, labels: level === undefined ? { team: 'a' } : { [ENFORCE]: level } },
});

describe('podSecurityLevelOf', () => {
  it('reads the enforce label; unlabelled is unknown; a value admission cannot parse is restricted, as admission judges it', () => {
    expect(podSecurityLevelOf({ [ENFORCE]: 'baseline' })).toBe('baseline');
    expect(podSecurityLevelOf({ [ENFORCE]: 'privileged' })).toBe('privileged');
    expect(podSecurityLevelOf({ other: 'x' })).toBeUndefined();
    expect(podSecurityLevelOf(undefined)).toBeUndefined();
    expect(podSecurityLevelOf({ [ENFORCE]: 'Restricted ' })).toBe('restricted');
  });
});

describe('NamespaceLevels', () => {
  it('follows lists and events, and says which namespaces changed level', () => {
    const changed: string[] = [];
    const levels = new NamespaceLevels((name) => changed.push(name));
    levels.replace([ns('a', 'restricted'), ns('b', 'privileged')]);
    expect([levels.levelOf('a'), levels.levelOf('b'), levels.levelOf('c')]).toEqual([
      'restricted',
      'privileged',
      undefined,
    ]);
    expect(changed.sort()).toEqual(['a', 'b']);
    changed.length = 0;
    levels.apply('MODIFIED', ns('a', 'restricted')); // same level: nothing to redo
    levels.apply('MODIFIED', ns('b', 'baseline'));
    levels.apply('DELETED', ns('a', 'restricted')); // left the selection: the label was removed
    expect([levels.levelOf('a'), levels.levelOf('b')]).toEqual([undefined, 'baseline']);
    expect(changed).toEqual(['b', 'a']);
    changed.length = 0;
    levels.replace([ns('b', 'baseline')]);
    expect(changed).toEqual([]);
    levels.replace([]);
    expect([levels.size, changed]).toEqual([0, ['b']]);
  });

  it('ignores objects without a name', () => {
    const levels = new NamespaceLevels();
    levels.apply('ADDED', { metadata: {} });
    levels.apply('ADDED', null);
    expect(levels.size).toBe(0);
  });

  it('watches only labelled namespaces, and only the watched one when the operator is scoped', () => {
    expect(namespaceLevelResource(undefined)).toMatchObject({
      path: '/api/v1/namespaces',
      labelSelector: ENFORCE,
    });
    expect(namespaceLevelResource(undefined).fieldSelector).toBeUndefined();
    expect(namespaceLevelResource('team-a').fieldSelector).toBe('metadata.name=team-a');
  });
});

describe('PrivilegedReaperNamespaces', () => {
  const optedIn = (name: string) => ({
    metadata: { name, labels: { 'sandbox.agents.dev/shell-reaper-privileged': 'allowed' } },
  });

  it('selects only the administrator’s exact opt-in, and follows lists and events', () => {
    expect(privilegedReaperResource(undefined).labelSelector).toBe(
      'sandbox.agents.dev/shell-reaper-privileged=allowed',
    );
    expect(privilegedReaperResource('team-a').fieldSelector).toBe('metadata.name=team-a');
    const changed: string[] = [];
    const opted = new PrivilegedReaperNamespaces((name) => changed.push(name));
    opted.replace([optedIn('a'), optedIn('b')]);
    expect([opted.allows('a'), opted.allows('b'), opted.allows('c')]).toEqual([true, true, false]);
    expect(changed.sort()).toEqual(['a', 'b']);
    changed.length = 0;
    opted.apply('MODIFIED', optedIn('a')); // still opted in: nothing to redo
    opted.apply('DELETED', optedIn('b')); // left the selection: the label was removed or changed
    opted.apply('ADDED', optedIn('c'));
    opted.replace([optedIn('a'), optedIn('c'), { metadata: {} }]);
    expect([opted.allows('a'), opted.allows('b'), opted.allows('c')]).toEqual([true, false, true]);
    expect(changed).toEqual(['b', 'c']);
  });
});
