#!/usr/bin/env node
// `npm test`: every test. The checks (`npm run check`: typecheck and lint) run beside the unit tests
// at the lowest CPU priority: the unit tests leave about a seventh of the two cores idle while they
// wait on agent CLIs, servers, PostgreSQL and git (measured), and the checks take only that; what
// is left of them runs once the unit tests are done. Then the browser specs, which need both cores
// to themselves. The exit code is 1 if any part failed; the browser specs do not run then.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Runs one command with the terminal's output; resolves with whether it passed. */
function run(file, args) {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd: ROOT, stdio: 'inherit' });
    child.once('error', (err) => {
      process.stderr.write(`rundiff: ${file} ${args.join(' ')} did not start: ${err.message}\n`);
      resolve(false);
    });
    child.once('close', (code) => resolve(code === 0));
  });
}

const [checked, unit] = await Promise.all([
  run('nice', ['-n', '19', process.execPath, path.join(ROOT, 'scripts/checks.js')]),
  run('npm', ['run', 'test:unit']),
]);
if (!checked) process.stderr.write('rundiff: the checks failed (npm run check says which)\n');
if (!unit) process.stderr.write('rundiff: the unit tests failed\n');
if (!checked || !unit) process.exit(1);
process.exit((await run('npm', ['run', 'test:e2e'])) ? 0 : 1);
