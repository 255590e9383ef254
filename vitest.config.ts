import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['server/**/*.test.ts', 'shared/**/*.test.ts', 'web/src/**/*.test.ts', 'scripts/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests spawn git and servers; two workers match the machines' two cores.
    pool: 'forks',
    maxWorkers: 2,
    // One throwaway PostgreSQL for the run, started when a test first asks for it.
    globalSetup: ['server/test-support/postgres-run.ts'],
  },
});
