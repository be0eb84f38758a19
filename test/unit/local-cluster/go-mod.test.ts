import { describe, expect, it } from 'vitest';
import { parseUpstreamGoMod, renderGoMod, stagingReplacements } from '@sandbox-operator/local-cluster/go-mod';

const upstream = `module k8s.io/kubernetes

go 1.26.0

godebug default=go1.26

godebug (
	winsymlink=0 // a comment
)

require (
	k8s.io/api v0.0.0
	k8s.io/client-go v0.0.0
	github.com/kylelemons/godebug v1.1.0 // indirect
)

replace (
	k8s.io/api => ./staging/src/k8s.io/api
	k8s.io/client-go v0.0.0 => ./staging/src/k8s.io/client-go
	example.com/fork => example.com/fork v1.2.3
)

replace k8s.io/streaming => ./staging/src/k8s.io/streaming
`;

describe('reading the upstream go.mod', () => {
  it('finds the go directive, the godebug settings and every ./staging replacement', () => {
    expect(parseUpstreamGoMod(upstream)).toEqual({
      goVersion: '1.26.0',
      godebug: ['default=go1.26', 'winsymlink=0'],
      stagingModules: ['k8s.io/api', 'k8s.io/client-go', 'k8s.io/streaming'],
    });
  });

  it('finds nothing to replace in a module without staging directories', () => {
    expect(
      parseUpstreamGoMod('module go.etcd.io/etcd/server/v3\n\ngo 1.26.0\n\ntoolchain go1.26.10\n'),
    ).toEqual({
      goVersion: '1.26.0',
      godebug: [],
      stagingModules: [],
    });
  });
});

describe('writing the throwaway go.mod', () => {
  it('copies go and godebug, and pins each staging module to its published release', () => {
    const parsed = parseUpstreamGoMod(upstream);
    expect(
      renderGoMod('sandbox-operator.local/tools/kubernetes', parsed, stagingReplacements(parsed, 'v0.36.3')),
    ).toBe(
      [
        'module sandbox-operator.local/tools/kubernetes',
        '',
        'go 1.26.0',
        '',
        'godebug default=go1.26',
        'godebug winsymlink=0',
        '',
        'replace (',
        '\tk8s.io/api => k8s.io/api v0.36.3',
        '\tk8s.io/client-go => k8s.io/client-go v0.36.3',
        '\tk8s.io/streaming => k8s.io/streaming v0.36.3',
        ')',
        '',
      ].join('\n'),
    );
  });
});
