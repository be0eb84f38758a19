/**
 * The API of sandbox-operator: names, limits, zod schemas and types for `Sandbox`, `SessionReference` and the warm pools' kinds
 * (`SandboxTemplate`, `SandboxWarmPool`, `SandboxClaim`)
 * (group sandbox.agents.dev, v1alpha1), and parsing of objects read from the API server. The CRDs in crds/
 * are generated from these schemas. Pure: no I/O lives here.
 */
export * from './names.ts';
export * from './limits.ts';
export * from './fields.ts';
export * from './blueprint.ts';
export * from './sandbox.ts';
export * from './session-reference.ts';
export * from './sandbox-template.ts';
export * from './sandbox-warm-pool.ts';
export * from './sandbox-claim.ts';
export * from './objects.ts';
export * from './parse.ts';
