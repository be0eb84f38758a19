import { defineConfig } from 'vitest/config';

// The unit tests of the mutated modules (stryker.config.json, docs/mutation-testing.md): each module's own
// tests alone must notice a wrong decision, so no test that drives a shell (a turn on scripted ports, the
// reaper on a fake world) or a cluster runs against the mutants.
export default defineConfig({
  test: {
    include: [
      'test/unit/{exclusivity,ledger-walk,api}/**/*.test.ts',
      'test/unit/controller/{deletion-steps,deletion-claims,ahead,pod-name,claims,suspension,disruption,disruption-notice,delete-review,reference-review,decision-review,marker-review}.test.ts',
      'test/unit/controller/warm-pool/{plan,pool-exemption}.test.ts',
      'test/unit/runtime/error-policy.test.ts',
      'test/unit/sidecar/{completion-report,group-judge,retire-plan}.test.ts',
      'test/unit/client/{vectors,resume}.test.ts',
      'test/unit/controller/binding/{pure,claim-status}.test.ts',
    ],
  },
});
