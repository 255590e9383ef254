#!/usr/bin/env node
// `npm run test:postgres`: vitest with every test server storing in PostgreSQL
// (RUNDIFF_TEST_STORE=postgres), on the test files under the folders below that start a test server
// (`startTestServer`), the only thing that setting changes. The other files there (pure units,
// servers given their own database URL) would run exactly as in the unit pass, which runs them.
// Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The server's API, runs and undo, what they sit on, and the centre's edge route. */
const FOLDERS = [
  'server/api',
  'server/runs',
  'server/revert',
  'server/net-change',
  'server/live',
  'server/git',
  'server/socket',
  'server/edge',
];

function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const files = FOLDERS.flatMap((f) => testFiles(path.join(ROOT, f)))
  .filter((f) => fs.readFileSync(f, 'utf8').includes('startTestServer('))
  .map((f) => path.relative(ROOT, f))
  .sort();
if (files.length === 0) {
  process.stderr.write('rundiff: no test file starts a test server; the PostgreSQL pass has nothing to run\n');
  process.exit(1);
}
const vitest = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const res = spawnSync(process.execPath, [vitest, 'run', ...files, ...process.argv.slice(2)], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, RUNDIFF_TEST_STORE: 'postgres' },
});
if (res.error) throw res.error;
process.exit(res.status ?? 1);
