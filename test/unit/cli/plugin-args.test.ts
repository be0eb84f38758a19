import { describe, expect, it } from 'vitest';
import { parseInvocation, UsageError } from '../../../operator/cli/plugin/args.ts';

describe('kubectl sandbox arguments', () => {
  it('reads a command, its object and the kubectl-style flags', () => {
    expect(parseInvocation(['refs', 'sbx-a', '-n', 'team-a', '--foreign', '-o', 'json'])).toEqual({
      kind: 'run',
      command: { kind: 'refs', sandbox: 'sbx-a', foreignOnly: true },
      scope: { allNamespaces: false, namespace: 'team-a' },
      output: 'json',
      kubectlFlags: [],
    });
    expect(parseInvocation(['why', 'sbx-a', '--context', 'prod', '--kubeconfig', '/k'])).toMatchObject({
      command: { kind: 'why', sandbox: 'sbx-a' },
      kubectlFlags: ['--context=prod', '--kubeconfig=/k'],
      output: 'text',
    });
    expect(parseInvocation(['shells', 'sref-b'])).toMatchObject({
      command: { kind: 'shells', reference: 'sref-b' },
      scope: { allNamespaces: false, namespace: undefined },
    });
  });

  it('passes kubectl’s global flags on to kubectl, in either spelling', () => {
    const invocation = parseInvocation([
      'why',
      'sbx-a',
      '--as',
      'alice',
      '--as-group=devs',
      '--as-group',
      'ops',
      '--request-timeout=5s',
      '-s',
      'https://127.0.0.1:6443',
      '--insecure-skip-tls-verify',
      '-o',
      'yaml',
    ]);
    expect(invocation).toMatchObject({
      output: 'yaml',
      kubectlFlags: [
        '--as=alice',
        '--request-timeout=5s',
        '--server=https://127.0.0.1:6443',
        '--as-group=devs',
        '--as-group=ops',
        '--insecure-skip-tls-verify=true',
      ],
    });
  });

  it('lists across all namespaces with -A when no name is given', () => {
    expect(parseInvocation(['why', '-A'])).toMatchObject({
      command: { kind: 'why-list' },
      scope: { allNamespaces: true },
    });
    expect(parseInvocation(['refs', '--all-namespaces', '--foreign'])).toMatchObject({
      command: { kind: 'refs-list', foreignOnly: true },
    });
    expect(parseInvocation(['refs', '-n', 'team-a'])).toMatchObject({
      command: { kind: 'refs-list', foreignOnly: false },
      scope: { allNamespaces: false, namespace: 'team-a' },
    });
  });

  it('lists the claims and pools of a namespace, or of all with -A', () => {
    expect(parseInvocation(['claims', '-n', 'team-a'])).toMatchObject({
      command: { kind: 'claims-list' },
      scope: { allNamespaces: false, namespace: 'team-a' },
    });
    expect(parseInvocation(['pools', '-A'])).toMatchObject({
      command: { kind: 'pools-list' },
      scope: { allNamespaces: true },
    });
  });

  it('shows the help without a command or with -h', () => {
    expect(parseInvocation([])).toEqual({ kind: 'help' });
    expect(parseInvocation(['why', 'x', '-h'])).toEqual({ kind: 'help' });
  });

  it.each([
    [['delete', 'sbx-a'], 'unknown command "delete": expected refs, why, shells, claims or pools'],
    [['shells'], 'shells needs the name of a sessionreference'],
    [['shells', '-A'], 'shells needs the name of a sessionreference'],
    [['refs', 'a', 'b'], 'refs takes one sandbox, got also: b'],
    [['refs', 'a', '-o', 'wide'], '--output must be text, json or yaml, got "wide"'],
    [['why', 'a', '--foreign'], '--foreign applies to refs only'],
    [['why', 'a', '--all-namespaces'], 'why a: a name cannot be combined with -A/--all-namespaces'],
    [['why', '-A', '-n', 'x'], '-n/--namespace and -A/--all-namespaces exclude each other'],
    [['why', 'a,b=c'], 'why: "a,b=c" is not a sandbox name'],
    [['why', 'a', '--watch'], "Unknown option '--watch'"],
    [['claims', 'c-1'], 'claims lists every one of the namespace (or of all, -A); got a name: c-1'],
    [['pools', 'p', '--foreign'], '--foreign applies to refs only'],
  ])('refuses %j: %s', (argv, message) => {
    expect(() => parseInvocation(argv)).toThrow(UsageError);
    expect(() => parseInvocation(argv)).toThrow(message);
  });
});
