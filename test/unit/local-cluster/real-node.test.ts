// The real node's pure parts: the teardown script refuses names a shell could misread and names what it
// removes; the Dockerfile's base is read off its ARGs under the name an engine resolves.
import { describe, expect, it } from 'vitest';
import { teardownScript } from '@sandbox-operator/local-cluster/node/teardown';
import { dockerfileBase, qualified } from '@sandbox-operator/local-cluster/images/node-base';
import { imageConfigJson } from '@sandbox-operator/local-cluster/images/docker-archive';
import {
  EXAMPLE_AGENT_RUNTIME_IMAGE,
  standInEntrypoint,
} from '@sandbox-operator/local-cluster/images/example-stand-in';

const resources = {
  cgroupName: 'sandbox-operator-ab12cd',
  dir: '/tmp/sandbox-operator-x/node',
  bridge: 'sbxopab12cd',
};

describe('the node teardown script', () => {
  it('kills, unmounts and removes exactly the run’s cgroup, directory and bridge', () => {
    const script = teardownScript(resources);
    expect(script).toContain('CG=sandbox-operator-ab12cd\n');
    expect(script).toContain('DIR=/tmp/sandbox-operator-x/node\n');
    expect(script).toContain('BRIDGE=sbxopab12cd\n');
    expect(script).toMatch(/kill -9/);
    expect(script).toMatch(/umount/);
  });

  it.each([
    ['cgroupName', 'x; rm -rf /'],
    ['dir', 'relative/dir'],
    ['dir', '/tmp/../etc'],
    ['bridge', 'br $(id)'],
  ])('refuses %s %j', (field, value) => {
    expect(() => teardownScript({ ...resources, [field]: value })).toThrow(field);
  });
});

describe('the Dockerfile base', () => {
  it('is read off NODE_VERSION and NODE_IMAGE', () => {
    const dockerfile =
      'ARG NODE_VERSION=24.21.0\nARG NODE_IMAGE=node:${NODE_VERSION}-bookworm-slim\nFROM ${NODE_IMAGE}\n';
    expect(dockerfileBase(dockerfile)).toEqual({
      nodeVersion: '24.21.0',
      image: 'node:24.21.0-bookworm-slim',
    });
    expect(() => dockerfileBase('FROM node:24\n')).toThrow('NODE_VERSION');
  });

  it('is qualified as a container engine resolves a short name', () => {
    expect(qualified('node:24.21.0-bookworm-slim')).toBe('docker.io/library/node:24.21.0-bookworm-slim');
    expect(qualified('library/node:1')).toBe('docker.io/library/node:1');
    expect(qualified('ghcr.io/a/b:1')).toBe('ghcr.io/a/b:1');
    expect(qualified('localhost/a:1')).toBe('localhost/a:1');
  });
});

describe('an image config', () => {
  it('lists one history entry and one diff id per layer (buildah counts them)', () => {
    const config = JSON.parse(imageConfigJson({ cmd: ['node'] }, ['aa', 'bb'])) as {
      rootfs: { diff_ids: string[] };
      history: unknown[];
    };
    expect(config.rootfs.diff_ids).toEqual(['sha256:aa', 'sha256:bb']);
    expect(config.history).toHaveLength(2);
  });
});

describe('the stand-in for the examples’ image', () => {
  it('says first, in its log, that it is not the image it is named for, and stops on SIGTERM', () => {
    const script = standInEntrypoint(EXAMPLE_AGENT_RUNTIME_IMAGE);
    const lines = script.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    expect(lines[0]).toMatch(
      /^echo "agent-runtime stand-in: this container is not ghcr\.io\/agent-platform\/agent-runtime:1\.8\.2 but/,
    );
    expect(lines[0]).toContain('a real cluster pulls the real image');
    expect(lines).toContain("trap 'exit 0' TERM INT");
  });
});
