/**
 * The whole path with the real agent: `rundiff hooks install claude-code` in a git workspace, then
 * two prompts of one real Claude Code session (offline, against a scripted model) that write, read,
 * edit and edit again through a shell command. The running server's history must show one session,
 * a run per prompt with its prompt and final reply, one block per editing tool, and nothing for the
 * read.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SessionDetailResponse, SessionListResponse } from '../../shared/index.ts';
import {
  claudeCodeSupported,
  ensureClaudeCode,
  installClaudeCodeHooks,
  runClaudeCode,
} from '../test-support/claude-code.ts';
import { startScriptedAnthropic, type ScriptedPrompt } from '../test-support/scripted-anthropic.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';
import { cleanupsAfterEach, filesOf } from '../test-support/agent-cli.ts';

const cleanups = cleanupsAfterEach();

describe.skipIf(!claudeCodeSupported)('Claude Code with rundiff hooks (real CLI, offline, real server)', () => {
  let bin = '';
  beforeAll(async () => {
    bin = await ensureClaudeCode();
  }, 600_000);

  it('two prompts give one session, two runs with their prompts and replies, and one block per editing tool', async () => {
    const server: TestServer = await startTestServer();
    cleanups.push(() => server.close());
    const serverUrl = `http://127.0.0.1:${server.server.port}`;
    const repo = createTempRepo({ files: { 'README.md': 'hello\n', 'src/app.txt': 'alpha\nbeta\n' } });
    cleanups.push(() => repo.cleanup());
    const home = createTempDir('rundiff-agent-home-');
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const ws = repo.dir;

    const install = await installClaudeCodeHooks(ws, serverUrl, home);
    expect(install, install.stderr).toMatchObject({ code: 0 });

    const script: ScriptedPrompt[] = [
      {
        match: 'first prompt',
        turns: [
          { tool: 'Write', input: { file_path: path.join(ws, 'notes.txt'), content: 'one\ntwo\n' } },
          { tool: 'Read', input: { file_path: path.join(ws, 'src/app.txt') } },
          { tool: 'Edit', input: { file_path: path.join(ws, 'src/app.txt'), old_string: 'beta', new_string: 'gamma' } },
          { text: 'First reply.' },
        ],
      },
      {
        match: 'second prompt',
        turns: [
          { tool: 'Bash', input: { command: "sed -i 's/hello/goodbye/' README.md", description: 'Edit the readme' } },
          { text: 'Second reply.' },
        ],
      },
    ];
    const model = await startScriptedAnthropic(script);
    cleanups.push(() => model.close());

    const opts = { bin, cwd: ws, home, modelUrl: model.url };
    const first = await runClaudeCode('Please handle the first prompt.', opts);
    const second = await runClaudeCode('Now the second prompt.', { ...opts, args: ['--continue'] });
    // The hooks did not disturb the agent: it finished normally and printed its own reply only.
    expect(first, first.stderr).toMatchObject({ code: 0 });
    expect(first.stdout.trim()).toBe('First reply.');
    expect(second, second.stderr).toMatchObject({ code: 0 });
    expect(second.stdout.trim()).toBe('Second reply.');
    expect(repo.read('notes.txt').toString()).toBe('one\ntwo\n');
    expect(repo.read('src/app.txt').toString()).toBe('alpha\ngamma\n');
    expect(repo.read('README.md').toString()).toBe('goodbye\n');

    const list = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    expect(list.sessions).toHaveLength(1);
    const sessionId = list.sessions[0]!.id;
    expect(sessionId).toMatch(/^claude-code:/);
    const detail = (await server.get(`/api/hermes/sessions/${encodeURIComponent(sessionId)}`))
      .body as SessionDetailResponse;

    expect(detail.runs.map((r) => [r.status, r.workspace])).toEqual([
      ['completed', ws],
      ['completed', ws],
    ]);
    const [run1, run2] = detail.runs;
    const said = (role: string) => detail.messages.filter((m) => m.role === role).map((m) => [m.run_id, m.content]);
    expect(said('user')).toEqual([
      [run1!.run_id, 'Please handle the first prompt.'],
      [run2!.run_id, 'Now the second prompt.'],
    ]);
    expect(said('assistant')).toEqual([
      [run1!.run_id, 'First reply.'],
      [run2!.run_id, 'Second reply.'],
    ]);

    // One block per editing tool, with its own files; the read has none.
    const toolChanges = detail.changes.filter((c) => c.tool_call_id !== null);
    expect(toolChanges.map((c) => [c.run_id, filesOf(c)])).toEqual([
      [run1!.run_id, [['notes.txt', 'added', 2, 0]]],
      [run1!.run_id, [['src/app.txt', 'modified', 1, 1]]],
      [run2!.run_id, [['README.md', 'modified', 1, 1]]],
    ]);
    const idOf = (name: string) => model.toolUses.filter((t) => t.name === name).map((t) => t.id);
    expect(toolChanges.map((c) => c.tool_call_id)).toEqual([...idOf('Write'), ...idOf('Edit'), ...idOf('Bash')]);
    expect(detail.tool_calls.map((t) => [t.tool_call_id, t.status, t.tracking])).toEqual(
      toolChanges.map((c) => [c.tool_call_id, 'completed', true]),
    );
    // The cards name the tool and what it worked on, as text.
    expect(detail.tool_calls.map((t) => t.name)).toEqual([
      expect.stringMatching(/^Write\b.*notes\.txt/),
      expect.stringMatching(/^Edit\b.*src\/app\.txt/),
      expect.stringMatching(/^Bash\b.*sed -i/),
    ]);
    // The read really ran (the agent reported it) and left no block.
    expect(idOf('Read')).toHaveLength(1);
    expect(detail.changes.some((c) => c.tool_call_id === idOf('Read')[0])).toBe(false);

    // Each run's change lists exactly the files of that prompt.
    const runChange = (runId: string) => detail.changes.find((c) => c.tool_call_id === null && c.run_id === runId)!;
    expect(filesOf(runChange(run1!.run_id))).toEqual([
      ['notes.txt', 'added', 2, 0],
      ['src/app.txt', 'modified', 1, 1],
    ]);
    expect(filesOf(runChange(run2!.run_id))).toEqual([['README.md', 'modified', 1, 1]]);
  }, 180_000);
  /** A loopback URL that was just listening and is now closed: nothing answers there. */
  async function goneServerUrl(): Promise<string> {
    const gone = await startTestServer();
    const url = `http://127.0.0.1:${gone.server.port}`;
    await gone.close();
    return url;
  }

  /** A one-prompt session that writes one file, in a fresh workspace and HOME. */
  async function onePrompt(serverUrl: string, installArgs: string[]) {
    const repo = createTempRepo({ files: { 'README.md': 'hello\n' } });
    cleanups.push(() => repo.cleanup());
    const home = createTempDir('rundiff-agent-home-');
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const install = await installClaudeCodeHooks(repo.dir, serverUrl, home, installArgs);
    expect(install, install.stderr).toMatchObject({ code: 0 });
    const model = await startScriptedAnthropic([
      {
        match: 'only prompt',
        turns: [
          { tool: 'Write', input: { file_path: path.join(repo.dir, 'notes.txt'), content: 'one\n' } },
          { text: 'Only reply.' },
        ],
      },
    ]);
    cleanups.push(() => model.close());
    // The server a hook may start in the background is this test's to stop, by the pid it recorded.
    const pidFile = path.join(home, '.local/share/rundiff/server.pid');
    cleanups.push(() => stopStartedServer(pidFile));
    const run = await runClaudeCode('The only prompt.', { bin, cwd: repo.dir, home, modelUrl: model.url });
    return { repo, run, pidFile };
  }

  it('with the server gone and autostart off, the hooked agent still finishes its prompt, prints only its reply, and no server starts', async () => {
    const url = await goneServerUrl();
    const { repo, run, pidFile } = await onePrompt(url, ['--no-autostart']);
    expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(run.stdout.trim()).toBe('Only reply.');
    expect(repo.read('notes.txt').toString()).toBe('one\n');
    expect(fs.existsSync(pidFile)).toBe(false);
    await expect(fetch(`${url}/api/health`)).rejects.toThrow();
  }, 180_000);

  it('with no server running, the first hook starts one in the background and the prompt is recorded there', async () => {
    const url = await goneServerUrl();
    const { run, pidFile } = await onePrompt(url, []);
    expect(run, run.stderr).toMatchObject({ code: 0 });
    expect(run.stdout.trim()).toBe('Only reply.');
    expect(fs.existsSync(pidFile)).toBe(true);
    const list = (await (await fetch(`${url}/api/hermes/sessions`)).json()) as SessionListResponse;
    expect(list.sessions).toHaveLength(1);
    const detail = (await (
      await fetch(`${url}/api/hermes/sessions/${encodeURIComponent(list.sessions[0]!.id)}`)
    ).json()) as SessionDetailResponse;
    expect(detail.runs.map((r) => r.status)).toEqual(['completed']);
    expect(detail.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'The only prompt.'],
      ['assistant', 'Only reply.'],
    ]);
    expect(detail.changes.filter((c) => c.tool_call_id !== null).map(filesOf)).toEqual([
      [['notes.txt', 'added', 1, 0]],
    ]);
  }, 180_000);
});

/** Stops the background server a hook started (its pid file names it) and waits until it is gone. */
async function stopStartedServer(pidFile: string): Promise<void> {
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  process.kill(pid, 'SIGKILL');
}
