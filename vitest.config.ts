import { defineConfig } from 'vitest/config';

// Tiers (CONTRIBUTING.md, "Tests"): unit tests are pure and never start a process or a cluster; process tests
// spawn real processes; integration and e2e share one
// real kube-apiserver + etcd started by the global setup; the soak starts its own.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
        },
      },
      {
        // Real processes and signals, no cluster: out of unit (which stays pure), beside it in npm test.
        test: {
          name: 'process',
          include: ['test/process/**/*.test.ts'],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/harness/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          globalSetup: ['test/harness/global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
      {
        // The randomized adversarial soak (test/soak, docs/soak.md): its own control plane with an audit log.
        // Sorted after e2e and integration, and alone in its file group, so it never shares the CPU with them.
        test: {
          name: 'soak',
          include: ['test/soak/**/*.test.ts'],
          globalSetup: ['test/soak/global-setup.ts'],
          testTimeout: 6 * 3600_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
