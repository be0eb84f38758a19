import { describe, expect, it } from 'vitest';
import { parseInvocation, UsageError } from '../../../operator/cli/plugin/args.ts';

describe('kubectl sandbox arguments', () => {
  it('reads a command, its object and the kubectl-style flags', () => {
    expect(parseInvocation(['refs', 'sbx-a', '-n', 'team-a', '--foreign', '-o', 'json'])).toEqual({
      kind: 'run',
      command: { kind: 'refs', sandbox: 'sbx-a', foreignOnly: true },
      namespace: 'team-a',
      context: undefined,
      kubeconfig: undefined,
      output: 'json',
    });
    expect(parseInvocation(['why', 'sbx-a', '--context', 'prod', '--kubeconfig', '/k'])).toMatchObject({
      command: { kind: 'why', sandbox: 'sbx-a' },
      context: 'prod',
      kubeconfig: '/k',
      output: 'text',
    });
    expect(parseInvocation(['shells', 'sref-b'])).toMatchObject({
      command: { kind: 'shells', reference: 'sref-b' },
      namespace: undefined,
    });
  });

  it('shows the help without a command or with -h', () => {
    expect(parseInvocation([])).toEqual({ kind: 'help' });
    expect(parseInvocation(['why', 'x', '-h'])).toEqual({ kind: 'help' });
  });

  it.each([
    [['delete', 'sbx-a'], 'unknown command "delete": expected refs, why or shells'],
    [['why'], 'why needs the name of a sandbox'],
    [['shells'], 'shells needs the name of a sessionreference'],
    [['refs', 'a', 'b'], 'refs takes one sandbox, got also: b'],
    [['refs', 'a', '-o', 'yaml'], '--output must be text or json, got "yaml"'],
    [['why', 'a', '--foreign'], '--foreign applies to refs only'],
    [['why', 'a', '--all-namespaces'], "Unknown option '--all-namespaces'"],
  ])('refuses %j: %s', (argv, message) => {
    expect(() => parseInvocation(argv)).toThrow(UsageError);
    expect(() => parseInvocation(argv)).toThrow(message);
  });
});
