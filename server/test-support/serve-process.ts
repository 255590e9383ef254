/**
 * Test harness: `rundiff serve` as a real child process (its own event loop, its own database
 * connection), started on a free port and stopped with SIGTERM.
 */
import { spawn } from 'node:child_process';
import { vi } from 'vitest';
import { RUNDIFF_BIN } from './cli-process.ts';

const BIN = RUNDIFF_BIN;

export interface ServeProcess {
  url: string;
  port: number;
  /** SIGTERM, then waits for the exit (a second call waits for the same exit). */
  stop(): Promise<void>;
  stderr(): string;
}

/** Starts `rundiff serve ARGS` and resolves once it prints its URL; `onStop` registers the stop for cleanup. */
export async function serveProcess(
  args: string[],
  env: Record<string, string>,
  onStop: (stop: () => Promise<void>) => void,
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/nonexistent', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  onStop(stop);
  let url = '';
  await vi.waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`serve exited: ${stderr}`);
      url = /serving on (http:\/\/\S+)/.exec(stderr)?.[1] ?? '';
      if (!url) throw new Error('not serving yet');
    },
    { timeout: 30_000, interval: 50 },
  );
  return { url, port: Number(new URL(url).port), stop, stderr: () => stderr };
}
