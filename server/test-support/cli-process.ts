import { spawn } from 'node:child_process';
import path from 'node:path';
import { COMPILED_CLI_DIR } from './compiled-cli.ts';

/**
 * The CLI as a user of the installed package runs it: `bin/rundiff.js` over the compiled server,
 * built once per test run by `compiled-cli-run.ts` (the vitest global setup).
 */
export const RUNDIFF_BIN = path.join(COMPILED_CLI_DIR, 'bin', 'rundiff.js');

/**
 * Runs `rundiff ...args` in `cwd` with a bare environment (PATH, HOME, then `env`), no input, and
 * collects its exit code and output.
 */
export function runRundiff(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [RUNDIFF_BIN, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
