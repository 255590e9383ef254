import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterEach, expect, it } from 'vitest';
import { wholeRunPatch } from '../delta/whole-run-patch.ts';
import { createTempDir } from '../test-support/index.ts';
import { resolved, testEngine } from '../test-support/engine-harness.ts';

/**
 * Files swapped while the engine takes and completes checkpoints: a regular file, a symlink to a
 * secret outside the workspace, a FIFO, and a folder on the path swapped for a symlink to a folder
 * outside. Whatever the timing, the secret never reaches a delta or a patch, and nothing hangs.
 */

const SECRET = 'TOP-SECRET-OUTSIDE-THE-WORKSPACE\n';
const FILES = 40;
const ATTEMPTS = 150;
const ATTEMPT_TIME_MS = 20_000;

/** The swapper, a separate process so swaps happen while the engine's worker reads. Plain JS. */
const SWAPPER = `
const fs = require('node:fs');
const [ws, park, stop] = process.argv.slice(1);
const files = ['file', 'slink', 'fifo'];
let current = 'file';
let swaps = 0;
let said = false;
for (let i = 0; i < 2_000_000; i++) {
  if ((i & 63) === 0 && fs.existsSync(stop)) break;
  // dir: the real folder <-> a symlink to the outside folder (same names, secret content)
  fs.renameSync(ws + '/dir', park + '/dir');
  fs.renameSync(park + '/dirlink', ws + '/dir');
  fs.renameSync(ws + '/dir', park + '/dirlink');
  fs.renameSync(park + '/dir', ws + '/dir');
  // swap.txt: regular file -> symlink to the secret -> FIFO -> ...
  const next = files[(files.indexOf(current) + 1) % files.length];
  fs.renameSync(ws + '/swap.txt', park + '/' + current);
  fs.renameSync(park + '/' + next, ws + '/swap.txt');
  current = next;
  swaps += 3;
  if (!said) {
    process.stdout.write('swapping\\n');
    said = true;
  }
}
// Leave the workspace in its first shape.
if (current !== 'file') {
  fs.renameSync(ws + '/swap.txt', park + '/' + current);
  fs.renameSync(park + '/file', ws + '/swap.txt');
}
process.stdout.write(String(swaps) + '\\n');
`;

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function layout() {
  const base = createTempDir('rundiff-read-race-');
  cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
  const ws = path.join(base, 'ws');
  const out = path.join(base, 'out');
  const park = path.join(base, 'park');
  for (const d of [path.join(ws, 'dir'), out, park]) fs.mkdirSync(d, { recursive: true });
  const inside = 'inside content, same length as the secret!\n'.slice(0, SECRET.length - 1) + '\n';
  expect(inside.length).toBe(SECRET.length);
  for (let i = 0; i < FILES; i++) {
    const name = `f${String(i).padStart(2, '0')}.txt`;
    fs.writeFileSync(path.join(ws, 'dir', name), inside);
    fs.writeFileSync(path.join(out, name), SECRET);
  }
  fs.writeFileSync(path.join(out, 'secret.txt'), SECRET);
  fs.symlinkSync(out, path.join(park, 'dirlink'));
  fs.writeFileSync(path.join(ws, 'swap.txt'), inside);
  fs.symlinkSync(path.join(out, 'secret.txt'), path.join(park, 'slink'));
  execFileSync('mkfifo', [path.join(park, 'fifo')]); // no shell: the system's tool, argv only
  return { base, ws, out, park, stop: path.join(base, 'stop') };
}

it(
  'swapping files for links, FIFOs and outside folders while checkpoints are taken and completed never puts an outside secret in a delta or patch, and never hangs',
  { tags: ['stress'] },
  async () => {
    const { ws, park, stop } = layout();
    const swapper = spawn(process.execPath, ['-e', SWAPPER, ws, park, stop], { stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(() => swapper.kill());
    let swapperErr = '';
    swapper.stderr.on('data', (d: Buffer) => (swapperErr += d.toString()));
    const lines = readline.createInterface({ input: swapper.stdout })[Symbol.asyncIterator]();
    // Wait for the first full round of swaps before taking checkpoints.
    expect((await lines.next()).value).toBe('swapping');

    const engine = testEngine({}, {});
    cleanups.push(() => void engine.close());
    const workspace = await resolved(ws);
    let naiveSawSecret = 0;
    let attempts = 0;
    let unreadableRows = 0;
    const until = Date.now() + ATTEMPT_TIME_MS;
    for (; attempts < ATTEMPTS && Date.now() < until; attempts++) {
      const id = `r${attempts}`;
      await engine.start({ sessionId: 's', changeId: id, runId: id, workspace });
      const delta = await engine.complete('s', id);
      expect(delta).not.toBeNull();
      unreadableRows += delta!.files.filter((f) => f.omitted_reason === 'unreadable').length;
      expect(JSON.stringify(delta)).not.toContain('TOP-SECRET');
      expect(wholeRunPatch(delta!.files)).not.toContain('TOP-SECRET');
      // Positive control: a plain read by name, at the same time, does reach the secret.
      for (let k = 0; k < 200 && naiveSawSecret === 0; k++) {
        try {
          if (fs.readFileSync(path.join(ws, 'dir', 'f00.txt'), 'utf8') === SECRET) naiveSawSecret++;
        } catch {
          // mid-swap: the name is briefly absent
        }
      }
    }
    fs.writeFileSync(stop, '');
    const swaps = Number((await lines.next()).value);
    expect(swapperErr).toBe('');
    // The swaps really happened, and reading by name really leaked the secret.
    expect(swaps).toBeGreaterThan(0);
    expect(naiveSawSecret).toBeGreaterThan(0);
    expect(attempts).toBeGreaterThan(0);
    // The engine itself met swapped files (read as unreadable), it did not just miss the swaps.
    expect(unreadableRows).toBeGreaterThan(0);
  },
);
