import { configDefaults, defineConfig, type ViteUserConfig } from 'vitest/config';
import { OWN_PROCESS_FILES, POSTGRES_VARIANT_FILES, TEST_FOLDERS } from './vitest.partition.ts';

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

/** The PostgreSQL variants: every test server stores in PostgreSQL. */
const onPostgres = { env: { RUNDIFF_TEST_STORE: 'postgres' } };
const ownProcessOnPostgres = POSTGRES_VARIANT_FILES.filter((f) => OWN_PROCESS_FILES.includes(f));

export default defineConfig({
  test: {
    ...baseTest,
    // The groups share the two workers, queued in the order of their names: the files that start
    // processes of their own (the slowest) first, each in a fresh process; then the rest, which
    // share their worker processes and fill the two workers up to the end. The files named in
    // POSTGRES_VARIANT_FILES run once more with PostgreSQL behind every test server (`:postgres`;
    // `npm run test:postgres` runs them alone) in the same run, so that the run's start, its global
    // setup and its tail, where one worker waits for the other, are paid once.
    // (A project's include adds to the root's, so the root has none.)
    projects: [
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS_FILES } },
      ...(ownProcessOnPostgres.length === 0
        ? []
        : [
            {
              extends: true as const,
              test: { name: 'own-process:postgres', include: ownProcessOnPostgres, ...onPostgres },
            },
          ]),
      { extends: true, test: { name: 'shared-process', ...sharedProcessTest } },
      {
        extends: true,
        test: {
          name: 'shared-process:postgres',
          ...sharedProcessTest,
          include: POSTGRES_VARIANT_FILES,
          ...onPostgres,
        },
      },
    ],
  },
});
