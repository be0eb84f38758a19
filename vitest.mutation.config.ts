import { defineConfig } from 'vitest/config';

// The unit tests of the pure core, for mutation testing (stryker.config.json): they alone must notice a
// wrong verdict, so no controller, sidecar or cluster test can kill a mutant of operator/{index,legacy}.
export default defineConfig({
  test: {
    include: ['test/unit/{index,legacy,api}/**/*.test.ts'],
  },
});
