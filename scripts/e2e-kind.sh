#!/usr/bin/env bash
# npm run e2e:kind — the e2e suite on a real cluster: creates a kind cluster, builds the image and loads it
# into kind, installs the chart, smoke-tests the installed operator (examples/, kubectl sandbox), then runs
# the same e2e suite that runs against the local control plane, with KUBECONFIG pointing at kind.
# Needs a Docker engine, kind, kubectl and helm on PATH, and Node (npm ci done). docs/kind.md explains it.
#
# Environment: KIND_CLUSTER_NAME (default sandbox-operator-e2e), KIND_NODE_IMAGE (kind's default),
# E2E_IMAGE (default sandbox-operator:e2e), KEEP_CLUSTER=1 to keep the cluster afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."

CLUSTER="${KIND_CLUSTER_NAME:-sandbox-operator-e2e}"
IMAGE="${E2E_IMAGE:-sandbox-operator:e2e}"
RELEASE=sandbox-operator      # test/e2e/operator-process.ts takes a token of this ServiceAccount
NAMESPACE=sandbox-system
SMOKE=e2e-smoke
WORK="$(mktemp -d)"
export KUBECONFIG="$WORK/kubeconfig"

step() { echo "::: $1"; }
need() {
  command -v "$1" >/dev/null 2>&1 || { echo "e2e:kind needs $1 on PATH: $2" >&2; exit 1; }
}
need docker "a Docker engine (these tests cannot run where none is available)"
need kind "https://kind.sigs.k8s.io/docs/user/quick-start/#installation"
need kubectl "https://kubernetes.io/docs/tasks/tools/"
need helm "https://helm.sh/docs/intro/install/ (or add the one npm run cluster:build makes to PATH)"
docker info >/dev/null 2>&1 || { echo "docker is installed but its engine does not answer (docker info)" >&2; exit 1; }

cleanup() {
  if [ "${KEEP_CLUSTER:-0}" = 1 ]; then
    echo "::: keeping kind cluster $CLUSTER: export KUBECONFIG=$KUBECONFIG"
  else
    kind delete cluster --name "$CLUSTER" || true
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

step "kind create cluster $CLUSTER"
kind create cluster --name "$CLUSTER" --config scripts/kind-config.yaml --kubeconfig "$KUBECONFIG" \
  ${KIND_NODE_IMAGE:+--image "$KIND_NODE_IMAGE"} --wait 180s

step "docker build $IMAGE"
# The base by digest, as every build of the image takes it (Dockerfile, NODE_IMAGE): the tag is resolved
# once, here, and the build cannot pick up another image pushed under it meanwhile.
NODE_BASE="node:$(sed -n 's/^ARG NODE_VERSION=//p' Dockerfile)-bookworm-slim"
docker pull --quiet "$NODE_BASE" >/dev/null
NODE_BASE_PINNED="$(docker image inspect --format '{{index .RepoDigests 0}}' "$NODE_BASE")"
docker build --tag "$IMAGE" \
  --build-arg NODE_IMAGE="$NODE_BASE_PINNED" \
  --build-arg VERSION="$(node -p 'require("./package.json").version')" \
  --build-arg REVISION="$(git rev-parse HEAD 2>/dev/null || echo unknown)" .
kind load docker-image "$IMAGE" --name "$CLUSTER"

step "helm install $RELEASE"
kubectl create namespace "$SMOKE"
helm install "$RELEASE" charts/sandbox-operator --namespace "$NAMESPACE" --create-namespace \
  --set image.repository="${IMAGE%:*}" --set image.tag="${IMAGE##*:}" --set image.pullPolicy=Never \
  --set "shellReaper.namespaces={$SMOKE}" --wait --timeout 5m
kubectl -n "$NAMESPACE" rollout status "deployment/$RELEASE" --timeout 3m

step "helm test $RELEASE"
helm test "$RELEASE" --namespace "$NAMESPACE" --timeout 5m --logs

step "smoke test: the installed operator, the sidecar and kubectl sandbox"
kubectl apply --server-side --field-manager=gitops -n "$SMOKE" -f examples/
kubectl -n "$SMOKE" wait sandbox/shared-login --for=jsonpath='{.status.references.attached}'=3 --timeout 2m
kubectl -n "$SMOKE" wait pod/shared-login-0 --timeout 3m \
  --for=jsonpath='{.status.containerStatuses[?(@.name=="shell-reaper")].started}'=true
kubectl diff --server-side --field-manager=gitops -n "$SMOKE" -f examples/
kubectl -n "$SMOKE" delete sandbox isolated-billing --wait=false
kubectl -n "$SMOKE" wait sandbox/isolated-billing --for=delete --timeout 2m
kubectl -n "$SMOKE" delete sandbox shared-login --wait=false
kubectl -n "$SMOKE" wait sandbox/shared-login --for=jsonpath='{.status.phase}'=Blocked --timeout 2m
PATH="$PWD/bin:$PATH" kubectl sandbox why shared-login -n "$SMOKE"
kubectl -n "$SMOKE" delete sessionreference board-main
kubectl -n "$SMOKE" wait sandbox/shared-login --for=delete --timeout 2m
kubectl delete namespace "$SMOKE" --timeout 3m

step "e2e suite (npx vitest run --project e2e) against kind"
# The suite runs the operator as its own process with the chart's ServiceAccount identity; the installed
# replica must not reconcile the same sandboxes meanwhile.
kubectl -n "$NAMESPACE" scale "deployment/$RELEASE" --replicas=0
kubectl -n "$NAMESPACE" wait pod --for=delete --timeout 2m \
  -l "app.kubernetes.io/instance=$RELEASE,app.kubernetes.io/component=operator"
SANDBOX_OPERATOR_E2E_EXTERNAL=1 npx vitest run --project e2e
step "e2e:kind passed"
