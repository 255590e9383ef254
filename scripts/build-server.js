#!/usr/bin/env node
// Compiles the server and shared code to plain JavaScript in dist/server and dist/shared (what the
// packed tarball runs, with no TypeScript loader), and copies the JavaScript files that are
// sources already (the git helper). Tests and test support are left out.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'dist');

for (const part of ['server', 'shared']) fs.rmSync(path.join(OUT, part), { recursive: true, force: true });
const tsc = spawnSync(
  process.execPath,
  [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
  {
    cwd: ROOT,
    stdio: 'inherit',
  },
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
process.stdout.write('built dist/server and dist/shared\n');
