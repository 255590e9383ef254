import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The checkout the tests run in. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Where the test run's compiled copy of the command lives (built by `compiled-cli-run.ts`): inside
 * the checkout, so that it finds the dependencies, the migrations and the built web UI there.
 */
export const COMPILED_CLI_DIR = path.join(REPO_ROOT, 'dist', 'tests-cli');

/**
 * The scan worker of the compiled copy, for the servers and engines tests start in their own
 * process: a worker thread on the checkout's `.ts` module registers the TypeScript loader first,
 * which costs about 260 ms of CPU per thread against about 70 ms for the compiled module (measured
 * here), and the shared-process project alone starts about 600. The same source, compiled. Null
 * outside a test run that built the copy (the default worker is used then).
 */
export function compiledScanWorker(): URL | null {
  const file = path.join(COMPILED_CLI_DIR, 'dist', 'server', 'workspace', 'scan-worker.js');
  return fs.existsSync(file) ? pathToFileURL(file) : null;
}
