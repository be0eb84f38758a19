/**
 * The soak's knobs, from the environment, each with its default and limit (a bad value fails at once,
 * naming the variable). `npm test` runs the CI set (200 fixed seeds); `npm run soak` sets 1,000.
 */
import { z } from 'zod';

const range = z
  .string()
  .regex(/^\d+,\d+$/, 'expected "<min ms>,<max ms>"')
  .transform((v) => v.split(',').map(Number) as [number, number]);

const schema = z.object({
  SOAK_SEQUENCES: z.coerce.number().int().min(1).max(100_000).default(200),
  SOAK_SEED: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 31)
    .default(20_261_201),
  SOAK_SEEDS: z
    .string()
    .regex(/^\d+(,\d+)*$/, 'expected comma-separated seeds')
    .transform((v) => v.split(',').map(Number))
    .optional(),
  SOAK_PATH: z.string().optional(),
  SOAK_PARALLEL: z.coerce.number().int().min(1).max(64).default(15),
  SOAK_SHRINK: z.coerce.number().int().min(0).max(500).default(8),
  SOAK_REPLICAS: z.coerce.number().int().min(1).max(2).default(1),
  SOAK_KILL_MS: z.union([z.literal('off'), range]).default([8_000, 25_000]),
  SOAK_FAULT_RATE: z.coerce.number().min(0).max(0.3).default(0.05),
  SOAK_REPORT: z.string().optional(),
  SOAK_RELEASE_BOUND_MS: z.coerce.number().int().min(5_000).max(600_000).default(60_000),
  SOAK_NAMESPACE_BOUND_MS: z.coerce.number().int().min(5_000).max(600_000).default(120_000),
});

export type SoakSettings = {
  readonly seeds: readonly number[];
  readonly path: string | undefined;
  readonly parallel: number;
  readonly shrinkRuns: number;
  readonly replicas: number;
  readonly killEveryMs: readonly [number, number] | null;
  readonly faultRate: number;
  readonly reportPath: string | undefined;
  readonly baseSeed: number;
  readonly bounds: { readonly releaseMs: number; readonly namespaceMs: number };
};

export function soakSettings(env: NodeJS.ProcessEnv): SoakSettings {
  const parsed = schema.safeParse(
    Object.fromEntries(Object.keys(schema.shape).map((key) => [key, env[key] === '' ? undefined : env[key]])),
  );
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${String(issue?.path[0] ?? 'soak settings')}: ${issue?.message ?? 'invalid'}`, {
      cause: parsed.error,
    });
  }
  const s = parsed.data;
  return {
    seeds: s.SOAK_SEEDS ?? Array.from({ length: s.SOAK_SEQUENCES }, (_, i) => s.SOAK_SEED + i),
    path: s.SOAK_PATH,
    parallel: s.SOAK_PARALLEL,
    shrinkRuns: s.SOAK_SHRINK,
    replicas: s.SOAK_REPLICAS,
    killEveryMs: s.SOAK_KILL_MS === 'off' ? null : s.SOAK_KILL_MS,
    faultRate: s.SOAK_FAULT_RATE,
    reportPath: s.SOAK_REPORT,
    baseSeed: s.SOAK_SEED,
    bounds: { releaseMs: s.SOAK_RELEASE_BOUND_MS, namespaceMs: s.SOAK_NAMESPACE_BOUND_MS },
  };
}
