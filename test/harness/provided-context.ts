// What the global setup provides to tests (vitest provide/inject).
declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig of the cluster under test. */
    kubeconfig: string;
    /** Kubeconfig of the unprivileged `sandbox-operator` user; null on an external cluster. */
    restrictedKubeconfig: string | null;
    /** The kubectl built by the local-cluster tooling. */
    kubectl: string;
    clusterKind: 'local' | 'external';
    /** The local control plane's real node (kubelet + containerd), or null (see realNodeSkipReason). */
    realNode: { name: string; shellImage: string; cgroupName: string; containerdSocket: string } | null;
    realNodeSkipReason: string | null;
    /** The API server's audit log (JSON lines; Metadata level, sandbox pods and Sandboxes); null if none. */
    admissionAuditLog: string | null;
  }
}

export {};
