import { execFileSync } from 'node:child_process';

/** Asks the OS for a free port, synchronously (Playwright configs are not async). */
export function freePort(): string {
  return execFileSync(
    process.execPath,
    [
      '-e',
      "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})",
    ],
    { encoding: 'utf8' },
  ).trim();
}
