import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout the tests run in. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Where the test run's compiled copy of the command lives (built by `compiled-cli-run.ts`): inside
 * the checkout, so that it finds the dependencies, the migrations and the built web UI there.
 */
export const COMPILED_CLI_DIR = path.join(REPO_ROOT, 'dist', 'tests-cli');
