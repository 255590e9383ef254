#!/usr/bin/env node
// Compiles the server and shared code to plain JavaScript in dist/server and dist/shared (what the
// packed tarball runs, with no TypeScript loader), and copies the JavaScript files that are
// sources already (the git helper). Tests and test support are left out.
//
// `--out DIR` builds a runnable copy of the command elsewhere instead: DIR/bin (the launchers) and
// DIR/dist/{server,shared}. DIR must lie inside the checkout, so that the copy finds the
// dependencies, the migrations and the web UI from there. The test run starts `rundiff` from such a
// copy (server/test-support/compiled-cli-run.ts).
//
// `--no-check` emits without type checking (tsc's --noCheck; the same JavaScript, in about a third
// of the time), for the test runs, where `npm run check` has type-checked the same sources.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outAt = process.argv.indexOf('--out');
const COPY = outAt === -1 ? null : path.resolve(process.argv[outAt + 1] ?? '');
if (COPY !== null && !COPY.startsWith(ROOT + path.sep)) {
  process.stderr.write(`build-server: --out must name a folder inside ${ROOT}\n`);
  process.exit(2);
}
const CHECK = !process.argv.includes('--no-check');
const OUT = COPY === null ? path.join(ROOT, 'dist') : path.join(COPY, 'dist');

for (const part of ['server', 'shared']) fs.rmSync(path.join(OUT, part), { recursive: true, force: true });
const tsc = spawnSync(
  process.execPath,
  [
    path.join(ROOT, 'node_modules/typescript/bin/tsc'),
    '-p',
    'tsconfig.build.json',
    '--outDir',
    OUT,
    ...(CHECK ? [] : ['--noCheck']),
  ],
  { cwd: ROOT, stdio: 'inherit' },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

function copyPlainJs(dir) {
  for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'test-support' && entry.name !== 'fixtures') copyPlainJs(rel);
    } else if (entry.name.endsWith('.js') && !entry.name.endsWith('.test.js')) {
      fs.mkdirSync(path.join(OUT, dir), { recursive: true });
      fs.copyFileSync(path.join(ROOT, rel), path.join(OUT, rel));
    }
  }
}
copyPlainJs('server');
if (COPY !== null) {
  fs.mkdirSync(path.join(COPY, 'bin'), { recursive: true });
  for (const name of fs.readdirSync(path.join(ROOT, 'bin')))
    if (name.endsWith('.js')) fs.copyFileSync(path.join(ROOT, 'bin', name), path.join(COPY, 'bin', name));
}
process.stdout.write(`built ${path.relative(ROOT, OUT)}/server and ${path.relative(ROOT, OUT)}/shared\n`);
