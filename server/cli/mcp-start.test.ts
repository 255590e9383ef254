import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';

/**
 * `rundiff mcp` as a child process, driven the way an impatient client drives it: initialize,
 * initialized and tools/list written at once, before anything has loaded, then stdin closed.
 */

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'rundiff.js');

interface Frame {
  id?: number;
  result?: { protocolVersion?: string; serverInfo?: { name: string }; tools?: { name: string }[] };
  error?: unknown;
}

function drive(
  args: string[],
  lines: object[],
  env: NodeJS.ProcessEnv,
): Promise<{ frames: Frame[]; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'mcp', ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.resume();
    child.on('error', reject);
    child.on('exit', (code) =>
      resolve({
        frames: stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Frame),
        code,
      }),
    );
    const frames = lines.map((m) => `${JSON.stringify(m)}\n`).join('');
    child.stdin.end(frames);
  });
}

describe('rundiff mcp start-up', () => {
  let repo: TempRepo;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    repo = createTempRepo({ files: { 'a.txt': 'one\n' } });
    env = { PATH: process.env.PATH ?? '', HOME: repo.dir, RUNDIFF_DB: path.join(repo.dir, '.calls.db') };
  });
  afterAll(() => repo.cleanup());

  it('answers initialize once, then what was sent before the tools loaded, in order, and exits at end of input', async () => {
    const { frames, code } = await drive(
      ['--workspace', repo.dir],
      [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'eager', version: '1' } },
        },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'git_status', arguments: {} } },
      ],
      env,
    );
    expect(code).toBe(0);
    expect(frames.map((f) => f.id)).toEqual([1, 2, 3]);
    expect(frames[0]!.result?.protocolVersion).toBe('2025-06-18');
    expect(frames[0]!.result?.serverInfo?.name).toBe('rundiff');
    expect(frames[1]!.result?.tools?.map((t) => t.name)).toContain('git_status');
    expect(frames[2]!.error).toBeUndefined();
  });

  it('refuses a bad workspace before answering anything', async () => {
    const { frames, code } = await drive(
      ['--workspace', path.join(repo.dir, 'missing')],
      [{ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }],
      env,
    );
    expect(code).toBe(1);
    expect(frames).toEqual([]);
  });
});
