import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { COMPILED_CLI_DIR, REPO_ROOT } from './compiled-cli.ts';

/**
 * Vitest global setup: the tests that run `rundiff` as a process start it from plain JavaScript
 * compiled once per test run (`scripts/build-server.js --out`), as the packed tarball runs it,
 * instead of through the TypeScript loader in every child (measured: about a third of the CPU per
 * start). It is emitted without type checking (`--no-check`, the same JavaScript in a third of the
 * time, while the tests wait): `npm run check` type-checks these sources. The copy is rebuilt only
 * when a source it is built from changed since (a fingerprint of names, sizes and times), and
 * swapped in whole, so a run never starts a half-written copy.
 * `bin/rundiff.js` on the sources stays covered by the browser specs, which start the checkout's
 * own command, and by the test of the command's loader (`server/cli/hooks/file-targets.test.ts`).
 */
export default function setup(): void {
  const stamp = fingerprint();
  const stampFile = path.join(COMPILED_CLI_DIR, 'fingerprint');
  if (readOr(stampFile) === stamp) return;
  const fresh = `${COMPILED_CLI_DIR}.new-${process.pid}`;
  fs.rmSync(fresh, { recursive: true, force: true });
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'scripts/build-server.js'), '--out', fresh, '--no-check'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  fs.writeFileSync(path.join(fresh, 'fingerprint'), stamp);
  const old = `${COMPILED_CLI_DIR}.old-${process.pid}`;
  if (fs.existsSync(COMPILED_CLI_DIR)) fs.renameSync(COMPILED_CLI_DIR, old);
  fs.renameSync(fresh, COMPILED_CLI_DIR);
  fs.rmSync(old, { recursive: true, force: true });
}

/**
 * What the copy is built from (what build-server.js compiles or copies: no tests, test support or
 * fixtures): every such file's name, size and modification time.
 */
function fingerprint(): string {
  const hash = crypto.createHash('sha256');
  const visit = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(REPO_ROOT, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'test-support' && entry.name !== 'fixtures') visit(child);
      } else if (/\.(ts|js|json)$/.test(entry.name) && !/\.test\.[tj]s$/.test(entry.name)) {
        const st = fs.statSync(path.join(REPO_ROOT, child));
        hash.update(`${child}\0${st.size}\0${st.mtimeMs}\n`);
      }
    }
  };
  for (const dir of ['server', 'shared', 'bin']) visit(dir);
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'scripts/build-server.js']) {
    const st = fs.statSync(path.join(REPO_ROOT, file));
    hash.update(`${file}\0${st.size}\0${st.mtimeMs}\n`);
  }
  return hash.digest('hex');
}

function readOr(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}
