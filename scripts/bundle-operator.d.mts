// Types of bundle-operator.mjs for the TypeScript that imports it (test/harness/pod-script.ts).
import type { Metafile } from 'esbuild';

export const BUNDLE_DIR: string;
export const ENTRY_POINTS: Readonly<Record<'main' | 'sidecar' | 'chart-test', string>>;
export function bundleOperator(outdir?: string): Promise<Metafile>;
export function bundleScript(contents: string): Promise<string>;
