import { defineConfig } from 'vitest/config';

// The unit tests of the pure core, for mutation testing (stryker.config.json): they alone must notice a
// wrong verdict, so no controller, sidecar or cluster test can kill a mutant of operator/{exclusivity,ledger-walk}.
export default defineConfig({
  test: {
    include: ['test/unit/{exclusivity,ledger-walk,api}/**/*.test.ts'],
  },
});
