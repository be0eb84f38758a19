# syntax=docker/dockerfile:1
# One image for the operator and the shell reaper sidecar (same files, different commands), each one ES
# module bundled by esbuild (scripts/bundle-operator.mjs) with its source map; no node_modules:
#   operator:   node dist/bundle/main.mjs         (the default command; the chart sets it explicitly)
#   sidecar:    node dist/bundle/sidecar.mjs      (injected into sandbox pods by the operator)
#   chart test: node dist/bundle/chart-test.mjs   (helm test's Pod)
# Build: docker build -t sandbox-operator:dev .   (scripts/e2e-kind.sh builds and loads it into kind)

ARG NODE_VERSION=24.21.0
# The builds pin the base by digest (docs/install.md, "Pinning images"): `npm run image:build` passes
# NODE_IMAGE=<its local base>@sha256:<digest> and records it in the provenance beside the tar
# (tools/local-cluster/images/operator-image.ts); scripts/e2e-kind.sh resolves the tag's digest first. By hand:
#   docker build --build-arg NODE_IMAGE=node:24.21.0-bookworm-slim@sha256:<digest> .
ARG NODE_IMAGE=node:${NODE_VERSION}-bookworm-slim

# Compile and bundle to dist/ with the dev dependencies; install scripts are not needed to compile.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# The lock names the workspaces (the local control plane, tools/local-cluster, and the client package,
# clients/typescript); npm ci needs their manifests, not their code.
COPY tools/local-cluster/package.json ./tools/local-cluster/
COPY clients/typescript/package.json ./clients/typescript/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY operator ./operator
COPY crds ./crds
# `npm run build` also bundles the kubectl plugin and the entry points (scripts/bundle-*.mjs); without these
# files the build failed, which no one saw until the image was first built (tools/local-cluster/images/
# operator-image.ts lists what this file copies).
COPY scripts/bundle-plugin.mjs scripts/bundle-operator.mjs ./scripts/
RUN npm run build

FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="sandbox-operator" \
      org.opencontainers.image.description="Kubernetes operator for AI-agent sandboxes shared by many agent sessions, and its shell reaper sidecar" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/sandbox-operator/sandbox-operator"
# --max-semi-space-size=4: V8's young generation capped at 4 MiB a semi-space instead of its default, for
# the operator and each sandbox pod's sidecar alike: 45 MiB less steady RSS for the operator at 200
# sandboxes, within the run-to-run spread of its CPU (docs/benchmarks.md).
ENV NODE_ENV=production \
    NODE_OPTIONS="--enable-source-maps --max-semi-space-size=4"
WORKDIR /app
# The bundles import only Node built-ins: neither node_modules nor tsc's per-file output is needed.
COPY --from=build /src/dist/bundle ./dist/bundle
# The node image's unprivileged user, by number so runAsNonRoot can verify it. The sidecar overrides it
# (runAsUser 0 with only CAP_KILL and CAP_SYS_PTRACE) in the pod spec the operator writes.
USER 1000:1000
CMD ["node", "dist/bundle/main.mjs"]
