import { defineConfig } from 'vitest/config';
import { baseTest, sharedProcessTest } from './vitest.config.ts';

/**
 * `npm run test:quick`: the unit tests on SQLite alone, for a quick check while working. It runs
 * the files that share their worker processes in `npm test` (vitest.partition.ts names the ones
 * left out: PostgreSQL, a real agent CLI, the `rundiff` command as a process), and the store
 * suites on SQLite only; the script adds `--tags-filter='!stress'`, leaving out the race and scale
 * tests. `npm test` runs everything, as CI does.
 */
export default defineConfig({
  test: {
    ...baseTest,
    ...sharedProcessTest,
    // No test here runs the `rundiff` command, so the compiled copy those tests start is not built.
    globalSetup: ['server/test-support/postgres-run.ts'],
    // The store suites' PostgreSQL half, and a clear failure if a test still asks for it.
    env: { RUNDIFF_TEST_POSTGRES: 'off' },
  },
});
