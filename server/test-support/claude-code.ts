/**
 * Test fixture: the real Claude Code CLI, installed once per machine outside the repository by
 * `scripts/ensure-claude-code.sh`, run offline against a scripted model (see scripted-anthropic.ts).
 *
 * The CLI is always started asynchronously: the scripted model answers from this same process, so
 * a synchronous spawn would leave both waiting for each other.
 */
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUNDIFF_BIN } from './cli-process.ts';

/** The version the agent tests were written and checked against. */
export const CLAUDE_CODE_VERSION = '2.1.328';

/** Only this platform has the binary the install script fetches. */
export const claudeCodeSupported = process.platform === 'linux' && process.arch === 'x64';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ensureScript = path.join(root, 'scripts/ensure-claude-code.sh');

/** Installs the CLI when missing (about 370 MB, once per machine) and resolves with its path. */
export function ensureClaudeCode(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [ensureScript], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${ensureScript} failed: ${err.message}\n${stderr}`));
      else resolve(stdout.trim().split('\n').pop() ?? '');
    });
  });
}

export interface ClaudeCodeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ClaudeCodeOptions {
  bin: string;
  cwd: string;
  /** A temp folder: the CLI keeps its sessions and user settings under HOME. */
  home: string;
  /** The scripted model's URL. */
  modelUrl: string;
  /** Extra arguments after the prompt (e.g. `--continue`). */
  args?: string[];
}

/** Runs `claude -p PROMPT` offline with edits accepted and Bash allowed; stdin closed. */
export function runClaudeCode(prompt: string, opts: ClaudeCodeOptions): Promise<ClaudeCodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      opts.bin,
      [
        '-p',
        prompt,
        ...(opts.args ?? []),
        '--permission-mode',
        'acceptEdits',
        '--allowedTools',
        'Bash',
        '--model',
        'claude-sonnet-4-5',
      ],
      {
        cwd: opts.cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
        // A plain environment: nothing of the machine's own Claude Code setup may leak in.
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: opts.home,
          ANTHROPIC_BASE_URL: opts.modelUrl,
          ANTHROPIC_API_KEY: 'offline-test-key',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        },
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * `rundiff hooks install claude-code --workspace WS --server URL` through the real command line,
 * asynchronously (the server that will answer the hooks may live in this process).
 */
export function installClaudeCodeHooks(
  workspace: string,
  serverUrl: string,
  home: string,
  extra: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = [RUNDIFF_BIN, 'hooks', 'install', 'claude-code'];
  args.push('--workspace', workspace, '--server', serverUrl, ...extra);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home }, encoding: 'utf8' },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}
