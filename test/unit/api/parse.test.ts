import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import {
  MalformedObjectError,
  parseSandbox,
  parseSessionReference,
  type Parsed,
} from '../../../operator/api/index.ts';
import {
  parseSandboxClaim,
  parseSandboxTemplate,
  parseSandboxWarmPool,
} from '../../../operator/api/parse.ts';

const failure = (parsed: Parsed<unknown>): MalformedObjectError => {
  if (parsed.ok) throw new Error('expected a malformed object');
  return parsed.error;
};

describe('parsing what is not an object', () => {
  it.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['a string', 'sbx-a'],
    ['a number', 42],
    ['a boolean', true],
  ])('refuses %s with the typed error, naming the root', (_, raw) => {
    const parsers: [string, (raw: unknown) => Parsed<unknown>][] = [
      ['Sandbox', parseSandbox],
      ['SessionReference', parseSessionReference],
      ['SandboxTemplate', parseSandboxTemplate],
      ['SandboxWarmPool', parseSandboxWarmPool],
      ['SandboxClaim', parseSandboxClaim],
    ];
    for (const [kind, parse] of parsers) {
      const error = failure(parse(raw));
      expect(error).toBeInstanceOf(MalformedObjectError);
      expect(error).toMatchObject({
        name: 'MalformedObjectError',
        kind: 'MalformedObject',
        objectKind: kind,
        objectKey: '<not an object>',
        field: '<root>',
        problem: expect.stringMatching(/^Invalid input: expected object, received /),
      });
      expect(error.message).toMatch(
        new RegExp(`^${kind} <not an object> is malformed: <root>: Invalid input`),
      );
      expect(error.cause).toBeInstanceOf(z.ZodError);
    }
  });

  it('refuses an array as an object without a name', () => {
    expect(failure(parseSessionReference([]))).toMatchObject({ objectKey: '?/?', field: '<root>' });
  });
});

describe('the key of a malformed object', () => {
  it.each<[string, unknown, string]>([
    ['no metadata', undefined, '?/?'],
    ['metadata that is not an object', 'x', '?/?'],
    ['null metadata', null, '?/?'],
    ['no namespace', { name: 'sref-a' }, '?/sref-a'],
    ['a name that is not a string', { namespace: 'team-a', name: 7 }, 'team-a/?'],
    ['a namespace that is not a string', { namespace: ['team-a'], name: 'sref-a' }, '?/sref-a'],
  ])('with %s is %s', (_, metadata, key) => {
    const error = failure(parseSessionReference({ kind: 'SessionReference', metadata }));
    expect(error.objectKey).toBe(key);
    expect(error.message).toMatch(
      new RegExp(`^SessionReference ${key.replace(/[?/]/g, '\\$&')} is malformed: `),
    );
  });
});

describe('the identity of a malformed object', () => {
  const malformed = (metadata: object) =>
    failure(
      parseSandbox({ kind: 'Sandbox', metadata: { namespace: 'team-a', name: 'sbx', ...metadata }, spec: 7 }),
    );

  it('carries its uid and resourceVersion as read, so the refusal can be said on the object itself', () => {
    expect(malformed({ uid: 'uid-1', resourceVersion: '42' }).identity).toStrictEqual({
      uid: 'uid-1',
      resourceVersion: '42',
    });
  });

  it('carries each only when the object has it as a string', () => {
    expect(malformed({ uid: 'uid-1' }).identity).toStrictEqual({ uid: 'uid-1' });
    expect(malformed({ resourceVersion: '42' }).identity).toStrictEqual({ resourceVersion: '42' });
    expect(malformed({ uid: 7, resourceVersion: 42 }).identity).toStrictEqual({});
    expect(failure(parseSandbox(null)).identity).toStrictEqual({});
  });
});
