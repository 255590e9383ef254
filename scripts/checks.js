#!/usr/bin/env node
// `npm run check`: the steps of `npm run typecheck` and `npm run lint`, two at a time. Each tool
// runs on one core, so on a two-core machine two at once take about half as long. A step's output
// is printed when it ends, with its time and result; the exit code is 1 if any failed.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { scripts } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

// The steps of the two scripts, as package.json writes them, the longest first (eslint with type
// information, about as long as the other three together): the other lane runs those meanwhile.
const JOBS = [scripts.typecheck, scripts.lint]
  .flatMap((s) => s.split(' && '))
  .sort((a, b) => Number(b.startsWith('eslint')) - Number(a.startsWith('eslint')));
const LANES = 2;

function run(command) {
  const started = Date.now();
  return new Promise((resolve) => {
    // npm puts node_modules/.bin on PATH, as for the scripts themselves.
    const child = spawn(command, { cwd: ROOT, shell: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => out.push(c));
    const done = (code, err) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const text = Buffer.concat(out).toString('utf8');
      process.stdout.write(`${code === 0 ? 'ok' : 'FAILED'}: ${command} (${seconds} s)\n`);
      if (code !== 0 && text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
      if (err) process.stdout.write(`${err.message}\n`);
      resolve(code === 0);
    };
    child.once('error', (err) => done(1, err));
    child.once('close', (code) => done(code ?? 1));
  });
}

const queue = [...JOBS];
let failed = false;
await Promise.all(
  Array.from({ length: LANES }, async () => {
    for (let job = queue.shift(); job; job = queue.shift()) if (!(await run(job))) failed = true;
  }),
);
process.exit(failed ? 1 : 0);
