import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The test files that get a fresh process each, in `npm test` and out of `npm run test:quick`: the
 * ones that start PostgreSQL (they import `test-support/postgres.ts`), drive a real agent CLI
 * (`*.e2e.test.ts`, `test-support/claude-code.ts`, `test-support/agent-cli.ts`) or run the `rundiff`
 * command as a process (`test-support/cli-process.ts`, `serve-process.ts`, `mcp-client.ts`,
 * `bin/rundiff.js`). Every other test file shares its worker process with the files before it
 * (measured: about half the CPU of a fresh process per file for the small ones).
 */

const ROOT = path.dirname(fileURLToPath(import.meta.url));
const NEEDS = [
  'postgres.ts',
  'claude-code.ts',
  'agent-cli.ts',
  'cli-process.ts',
  'serve-process.ts',
  'mcp-client.ts',
].map((p) => path.join(ROOT, 'server/test-support', p));

/** The folders that hold test files (`*.test.ts`). */
export const TEST_FOLDERS = ['server', 'shared', 'web/src', 'scripts'];

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** Whether `file` imports one of NEEDS (its relative import specifiers, resolved) or runs the CLI. */
function needsMore(file: string): boolean {
  const text = fs.readFileSync(file, 'utf8');
  if (/bin\/rundiff\.js|'bin', 'rundiff\.js'/.test(text)) return true;
  for (const m of text.matchAll(/from\s+'(\.{1,2}\/[^']+)'/g))
    if (NEEDS.includes(path.resolve(path.dirname(file), m[1]!))) return true;
  return false;
}

/** Those files, relative to the repository. */
export const OWN_PROCESS_FILES = TEST_FOLDERS.flatMap((d) => testFiles(path.join(ROOT, d)))
  .filter((f) => f.endsWith('.e2e.test.ts') || needsMore(f))
  .map((f) => path.relative(ROOT, f));

/**
 * The folders whose test files run a second time with every test server storing in PostgreSQL
 * (`RUNDIFF_TEST_STORE=postgres`): the server's API, runs and undo, what they sit on, and the
 * centre's edge route.
 */
const POSTGRES_VARIANT_FOLDERS = [
  'server/api',
  'server/runs',
  'server/revert',
  'server/net-change',
  'server/live',
  'server/git',
  'server/socket',
  'server/edge',
];

/**
 * The test files of those folders that start a test server (`startTestServer`), the only thing the
 * setting changes: the others there (pure units, servers given their own database URL) would run
 * exactly as they do once.
 */
export const POSTGRES_VARIANT_FILES = POSTGRES_VARIANT_FOLDERS.flatMap((d) => testFiles(path.join(ROOT, d)))
  .filter((f) => fs.readFileSync(f, 'utf8').includes('startTestServer('))
  .map((f) => path.relative(ROOT, f))
  .sort();
