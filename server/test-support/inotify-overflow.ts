import { spawn } from 'node:child_process';

/**
 * Overflows this process's inotify queues without root: another process stops this one (SIGSTOP),
 * creates `count` empty files `<prefix><n>` in `dir` while nothing here can read the events, then
 * lets this process go on (SIGCONT, also when creating failed). With `count` over
 * `fs.inotify.max_queued_events` (16,384 by default) the kernel drops the rest and queues
 * IN_Q_OVERFLOW. Resolves with the files created.
 */
const BURST = `
const fs = require('node:fs');
const path = require('node:path');
const [dir, prefix, count, pid] = process.argv.slice(1);
let n = 0;
process.kill(Number(pid), 'SIGSTOP');
try {
  for (; n < Number(count); n++) fs.closeSync(fs.openSync(path.join(dir, prefix + n), 'w'));
} finally {
  process.kill(Number(pid), 'SIGCONT');
}
process.stdout.write(String(n));
`;

export function overflowInotifyQueue(dir: string, prefix: string, count: number): Promise<number> {
  const child = spawn(process.execPath, ['-e', BURST, dir, prefix, String(count), String(process.pid)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(Number(out)) : reject(new Error(`burst exited ${code}: ${err.trim()}`)),
    );
  });
}
