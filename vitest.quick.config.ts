import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * `npm run test:quick`: the unit tests on SQLite alone, for a quick check while working. Left out:
 * the test files that start PostgreSQL (they import `test-support/postgres.ts`), drive a real agent
 * CLI (`*.e2e.test.ts`, `test-support/claude-code.ts`) or run the `rundiff` command as a process
 * (`test-support/cli-process.ts`, `test-support/serve-process.ts`, `bin/rundiff.js`); the store
 * suites run on SQLite only. `npm test` runs everything, as CI does.
 */

const ROOT = path.dirname(fileURLToPath(import.meta.url));
const NEEDS = ['postgres.ts', 'claude-code.ts', 'cli-process.ts', 'serve-process.ts'].map((p) =>
  path.join(ROOT, 'server/test-support', p),
);

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

const leftOut = ['server', 'shared', 'web/src', 'scripts']
  .flatMap((d) => testFiles(path.join(ROOT, d)))
  .filter((f) => f.endsWith('.e2e.test.ts') || needsMore(f))
  .map((f) => path.relative(ROOT, f));

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: ['**/node_modules/**', ...leftOut],
      // The test files share their worker processes instead of one fresh process each (the full
      // suite keeps them apart); measured to pass and to save about a fifth of the CPU.
      isolate: false,
      // The store suites' PostgreSQL half, and a clear failure if a test still asks for it.
      env: { RUNDIFF_TEST_POSTGRES: 'off' },
    },
  }),
);
