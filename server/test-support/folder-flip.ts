import { spawn } from 'node:child_process';

/**
 * A folder flipped from another process: `dir/name` turns, for `ms` (real for a millisecond between flips), from the real
 * folder into a symlink to `target` and back (the real folder waits under `name.real` meanwhile).
 * It always ends as the real folder. Resolves with the round trips done.
 */
const FLIP = `
const fs = require('node:fs');
const path = require('node:path');
const [dir, name, target, ms] = process.argv.slice(1);
const at = path.join(dir, name), aside = path.join(dir, name + '.real');
const end = Date.now() + Number(ms);
const pause = new Int32Array(new SharedArrayBuffer(4));
let n = 0;
while (Date.now() < end) {
  fs.renameSync(at, aside);
  fs.symlinkSync(target, at);
  fs.unlinkSync(at);
  fs.renameSync(aside, at);
  n += 1;
  // Real for a millisecond between flips, so work on the folder also gets through.
  Atomics.wait(pause, 0, 0, 1);
}
process.stdout.write(String(n));
`;

export function startFolderFlip(dir: string, opts: { name: string; target: string; ms: number }): Promise<number> {
  const child = spawn(process.execPath, ['-e', FLIP, dir, opts.name, opts.target, String(opts.ms)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`folder flip failed: ${err}`))));
  });
}
