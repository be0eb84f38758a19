// What the soak's global setup provides besides the harness's context (vitest provide/inject).
declare module 'vitest' {
  export interface ProvidedContext {
    /** The soak API server's audit log (JSON lines). */
    auditLogPath: string;
    /** The control plane's temporary directory (component logs). */
    clusterTempDir: string;
    /** The compiled operator's entry point (dist-style build of operator/). */
    operatorMain: string;
  }
}

export {};
