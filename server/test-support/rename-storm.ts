import { spawn, type ChildProcess } from 'node:child_process';

/**
 * A rename storm from another process: `from` and `to` (paths relative to `dir`) swap names in a
 * tight loop, a bounded number of round trips within a bounded time. The file ends under its first
 * name, so a workspace looks the same before and after. Resolves with the renames done.
 */
export interface RenameStorm {
  child: ChildProcess;
  done: Promise<number>;
  stop(): void;
}

const STORM = `
const fs = require('node:fs');
const path = require('node:path');
const [dir, from, to, pairs, maxMs] = process.argv.slice(1);
const a = path.join(dir, from), b = path.join(dir, to);
const end = Date.now() + Number(maxMs);
let n = 0;
while (n < 2 * Number(pairs) && Date.now() < end) {
  fs.renameSync(a, b);
  fs.renameSync(b, a);
  n += 2;
}
process.stdout.write(String(n));
`;

export function startRenameStorm(
  dir: string,
  opts: { from: string; to: string; pairs: number; maxMs: number },
): RenameStorm {
  const child = spawn(
    process.execPath,
    ['-e', STORM, dir, opts.from, opts.to, String(opts.pairs), String(opts.maxMs)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`rename storm failed: ${err}`))));
  });
  return {
    child,
    done,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
    },
  };
}
