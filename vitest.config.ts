import { configDefaults, defineConfig, type ViteUserConfig } from 'vitest/config';
import { OWN_PROCESS_FILES, TEST_FOLDERS } from './vitest.partition.ts';

/** Every test file. */
const ALL_TESTS = TEST_FOLDERS.map((d) => `${d}/**/*.test.ts`);

/** What every test run shares (`npm test`, `npm run test:quick`). */
export const baseTest = {
  environment: 'node',
  testTimeout: 30_000,
  hookTimeout: 30_000,
  // Tests spawn git and servers; two workers match the machines' two cores.
  pool: 'forks',
  maxWorkers: 2,
  // One throwaway PostgreSQL for the run, started when a test first asks for it.
  globalSetup: ['server/test-support/postgres-run.ts', 'server/test-support/compiled-cli-run.ts'],
  tags: [
    {
      name: 'stress',
      description:
        'a race or scale test (thousands of files, a busy swapper process, many rounds): in npm test, not in test:quick',
    },
  ],
} satisfies ViteUserConfig['test'];

/** The files that share their worker processes (vitest.partition.ts says why the others do not). */
export const sharedProcessTest = {
  include: ALL_TESTS,
  exclude: [...configDefaults.exclude, ...OWN_PROCESS_FILES],
  isolate: false,
} satisfies ViteUserConfig['test'];

export default defineConfig({
  test: {
    ...baseTest,
    // Two groups run side by side. The files that start processes of their own (the slowest) are
    // queued first, each in a fresh process; the rest share their worker processes and fill the
    // two workers up to the end. (A project's include adds to the root's, so the root has none.)
    projects: [
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS_FILES } },
      { extends: true, test: { name: 'shared-process', ...sharedProcessTest } },
    ],
  },
});
