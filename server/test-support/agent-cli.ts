/**
 * Test fixture: the real agent CLIs, each installed once per machine outside the repository at a
 * pinned version by `scripts/ensure-agent-cli.sh`, and `rundiff hooks install` run through the real
 * command line for them. Everything here is asynchronous: the scripted model and the server that
 * answer the agent live in the test process, so a synchronous spawn would leave both waiting.
 */
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RUNDIFF_BIN } from './cli-process.ts';
import { afterEach, expect } from 'vitest';
import type { ChangeSummary, Review, SessionDetailResponse } from '../../shared/index.ts';
import type { TestServer } from './server-harness.ts';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ensureScript = path.join(root, 'scripts/ensure-agent-cli.sh');

/** The agents whose CLI the install script knows, with the platforms their binaries exist for. */
export type AgentCli = 'claude-code' | 'codex' | 'gemini' | 'opencode' | 'cline';

/** Only this platform has the binaries the install script fetches. */
export const agentCliSupported = process.platform === 'linux' && process.arch === 'x64';

/** Installs the agent's CLI when missing (once per machine) and resolves with its binary's path. */
export function ensureAgentCli(agent: AgentCli): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [ensureScript, agent],
      { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${ensureScript} ${agent} failed: ${err.message}\n${stderr}`));
        else resolve(stdout.trim().split('\n').pop() ?? '');
      },
    );
  });
}

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs an agent CLI with stdin closed, in a plain environment (only PATH and what `env` gives). */
export function runAgentCli(bin: string, args: string[], cwd: string, env: Record<string, string>): Promise<AgentRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Nothing of the machine's own agent setup may leak in.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `rundiff hooks install AGENT --workspace WS --server URL` through the real command line. */
export function installAgentHooks(
  agent: string,
  workspace: string,
  serverUrl: string,
  home: string,
  extra: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return rundiffHooks(['install', agent, '--workspace', workspace, '--server', serverUrl, ...extra], home);
}

/** `rundiff hooks status --workspace WS --server URL` through the real command line. */
export function agentHooksStatus(
  workspace: string,
  serverUrl: string,
  home: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return rundiffHooks(['status', '--workspace', workspace, '--server', serverUrl], home);
}

function rundiffHooks(args: string[], home: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [RUNDIFF_BIN, 'hooks', ...args],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home }, encoding: 'utf8' },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Sends a review of a session's first run over REST, as a user would between two prompts: one
 * comment on line `line` of `path` as that run left it, then the review with `note`. Resolves with
 * the review the server made.
 */
export async function sendReviewOfFirstRun(
  server: TestServer,
  base: string,
  comment: { path: string; line: number; body: string },
  note: string,
): Promise<Review> {
  const detail = (await server.get(base)).body as SessionDetailResponse;
  const run = detail.changes.find((c) => c.tool_call_id === null)!;
  const file = run.files.find((f) => f.path === comment.path)!;
  const post = (p: string, body: unknown) =>
    server.request('POST', p, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const made = await post(`${base}/comments`, {
    change_id: run.change_id,
    file_id: file.id,
    side: 'after',
    start_line: comment.line,
    end_line: comment.line,
    body: comment.body,
  });
  expect(made.status, made.text).toBe(201);
  const sent = await post(`${base}/reviews`, { note });
  expect(sent.status, sent.text).toBe(201);
  return sent.body.review as Review;
}

/** The cleanups of each test of the calling file, run last-in first-out after it: push onto the array. */
export function cleanupsAfterEach(): (() => void | Promise<void>)[] {
  const cleanups: (() => void | Promise<void>)[] = [];
  afterEach(async () => {
    while (cleanups.length) await cleanups.pop()?.();
  });
  return cleanups;
}

/** The files of a change as `[path, type, additions, deletions]`, sorted by path. */
export const filesOf = (c: ChangeSummary) =>
  c.files
    .map((f) => [f.path, f.change_type, f.additions, f.deletions])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));

/** Words that appear nowhere but in a review comment, so finding them in a request proves the review got there. */
export const REVIEW_COMMENT = 'Rename gamma-ray-7731 to delta before merging, please.';
