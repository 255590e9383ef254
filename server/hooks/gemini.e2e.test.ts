/**
 * The whole path with the real Gemini CLI: `rundiff hooks install gemini`, then two prompts of one
 * real Gemini session (offline, against a scripted Gemini API model). The first writes a file with
 * `write_file`, edits one with Gemini's own `replace` and reads one with `read_file` (read-only); a
 * review of that run is sent over REST; the second prompt (resumed session) carries it to the model,
 * edits through the shell and deletes a file through the shell. The running server's timeline, read
 * over REST, must show exactly that.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SessionDetailResponse, SessionListResponse, SessionReviewResponse } from '../../shared/index.ts';
import {
  agentCliSupported,
  cleanupsAfterEach,
  ensureAgentCli,
  filesOf,
  installAgentHooks,
  sendReviewOfFirstRun,
} from '../test-support/agent-cli.ts';
import { prepareGeminiHome, runGemini } from '../test-support/gemini.ts';
import { startScriptedGemini } from '../test-support/scripted-gemini.ts';
import { startTestServer } from '../test-support/server-harness.ts';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';

const cleanups = cleanupsAfterEach();

/** Words that appear nowhere but in the comment, so finding them in a request proves the review got there. */
const COMMENT = 'Rename gamma-ray-7731 to delta before merging, please: <b> stays.';

describe.skipIf(!agentCliSupported)('Gemini CLI with rundiff hooks (real CLI, offline, real server)', () => {
  let bin = '';
  beforeAll(async () => {
    bin = await ensureAgentCli('gemini');
  }, 600_000);

  it('two prompts give one session, a block per editing tool, none for read_file, and the review reaches the second prompt', async () => {
    const server = await startTestServer();
    cleanups.push(() => server.close());
    const serverUrl = `http://127.0.0.1:${server.server.port}`;
    const repo = createTempRepo({
      files: { 'README.md': 'hello\n', 'src/app.txt': 'alpha\nbeta\n', 'old.txt': 'stale\n' },
    });
    repo.commit('start');
    cleanups.push(() => repo.cleanup());
    const home = createTempDir('rundiff-agent-home-');
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const ws = repo.dir;
    prepareGeminiHome(home, ws);
    const install = await installAgentHooks('gemini', ws, serverUrl, home);
    expect(install, install.stderr).toMatchObject({ code: 0 });

    const model = await startScriptedGemini([
      {
        match: 'first prompt',
        turns: [
          {
            tool: 'write_file',
            input: { file_path: path.join(ws, 'notes.txt'), content: 'one\ntwo\n' },
            usage: { prompt: 800, cached: 500, candidates: 20, thoughts: 4 },
          },
          { tool: 'read_file', input: { file_path: path.join(ws, 'src/app.txt') } },
          {
            tool: 'replace',
            input: {
              file_path: path.join(ws, 'src/app.txt'),
              old_string: 'beta',
              new_string: 'gamma',
              instruction: 'Rename beta to gamma',
            },
            usage: { prompt: 900, cached: 800, candidates: 15, toolUse: 2 },
          },
          { text: 'First reply.', usage: { prompt: 1000, cached: 900, candidates: 6 } },
        ],
      },
      {
        match: 'second prompt',
        turns: [
          { tool: 'run_shell_command', input: { command: "sed -i 's/hello/goodbye/' README.md" } },
          { tool: 'run_shell_command', input: { command: 'rm old.txt' } },
          { text: 'Second reply.', usage: { prompt: 1200, candidates: 30, thoughts: 12 } },
        ],
      },
    ]);
    cleanups.push(() => model.close());
    const opts = { bin, cwd: ws, home, modelUrl: model.url };

    const first = await runGemini('Please handle the first prompt.', opts);
    // The hooks did not disturb the agent: it finished normally and printed its own reply only.
    expect(first, first.stderr).toMatchObject({ code: 0 });
    expect(first.stdout.trim()).toBe('First reply.');
    expect(repo.read('notes.txt').toString()).toBe('one\ntwo\n');
    expect(repo.read('src/app.txt').toString()).toBe('alpha\ngamma\n');
    const firstRequests = model.requests.length;

    const list = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    expect(list.sessions).toHaveLength(1);
    const sessionId = list.sessions[0]!.id;
    expect(sessionId).toMatch(/^gemini:/);
    const base = `/api/hermes/sessions/${encodeURIComponent(sessionId)}`;

    // A comment on the line the edit changed, sent as a review before the next prompt.
    const review = await sendReviewOfFirstRun(
      server,
      base,
      { path: 'src/app.txt', line: 2, body: COMMENT },
      'One thing before you go on.',
    );

    const second = await runGemini('Now the second prompt.', { ...opts, resume: true });
    expect(second, second.stderr).toMatchObject({ code: 0 });
    expect(second.stdout.trim()).toBe('Second reply.');
    expect(repo.read('README.md').toString()).toBe('goodbye\n');
    expect(fs.existsSync(path.join(ws, 'old.txt'))).toBe(false);

    // The review reached the model with the second prompt, and not before.
    const carries = (r: { body: unknown }) => JSON.stringify(r.body).includes('gamma-ray-7731');
    expect(model.requests.slice(0, firstRequests).some(carries)).toBe(false);
    const mainOfSecond = model.requests.slice(firstRequests).filter((r) => r.main);
    const secondFirst = JSON.stringify(mainOfSecond[0]!.body);
    expect(secondFirst).toContain('Now the second prompt.');
    // Gemini rewrites < and > in hook context as &lt; and &gt;: the review reaches the model with
    // none of those, its angle brackets written as \u escapes it names, and its quote marker "| ".
    const context = /<hook_context>([\s\S]*?)<\/hook_context>/.exec(
      (JSON.parse(secondFirst) as { contents: { parts: { text?: string }[] }[] }).contents
        .flatMap((c) => c.parts.map((p) => p.text ?? ''))
        .join('\n'),
    )?.[1];
    expect(context).toBeDefined();
    expect(context).not.toMatch(/&lt;|&gt;/);
    expect(context).toContain('| Rename gamma-ray-7731 to delta before merging, please: \\u003cb\\u003e stays.');
    expect(context).toContain('| One thing before you go on.');
    const reviewAfter = (await server.get(`${base}/review`)).body as SessionReviewResponse;
    expect(reviewAfter.reviews).toEqual([
      expect.objectContaining({ id: review.id, state: 'delivered', delivered_via: 'hook', delivered_to: 'gemini' }),
    ]);

    const after = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    expect(after.sessions.map((s) => s.id)).toEqual([sessionId]);
    const detail = (await server.get(base)).body as SessionDetailResponse;
    expect(detail.runs.map((r) => [r.status, r.workspace])).toEqual([
      ['completed', ws],
      ['completed', ws],
    ]);
    const [run1, run2] = detail.runs;
    // Each run's tokens, from Gemini's chat log: what the scripted answers reported (unscripted ones
    // 10 in, 10 out), cached input apart, thinking counted as output, tool-use prompt as input.
    expect(detail.runs.map((r) => r.usage)).toEqual([
      { input: 512, output: 55, cache_read: 2200, cache_write: 0 },
      { input: 1220, output: 62, cache_read: 0, cache_write: 0 },
    ]);
    const said = (role: string) => detail.messages.filter((m) => m.role === role).map((m) => [m.run_id, m.content]);
    expect(said('user')).toEqual([
      [run1!.run_id, 'Please handle the first prompt.'],
      [run2!.run_id, 'Now the second prompt.'],
    ]);
    expect(said('assistant')).toEqual([
      [run1!.run_id, 'First reply.'],
      [run2!.run_id, 'Second reply.'],
    ]);

    // One block per editing tool; read_file has none (Gemini gives no call ids: they are rundiff's).
    const toolChanges = detail.changes.filter((c) => c.tool_call_id !== null);
    expect(toolChanges.map((c) => [c.run_id, filesOf(c)])).toEqual([
      [run1!.run_id, [['notes.txt', 'added', 2, 0]]],
      [run1!.run_id, [['src/app.txt', 'modified', 1, 1]]],
      [run2!.run_id, [['README.md', 'modified', 1, 1]]],
      [run2!.run_id, [['old.txt', 'deleted', 0, 1]]],
    ]);
    expect(model.toolUses.map((t) => t.name)).toContain('read_file');
    expect(detail.tool_calls.map((t) => [(t.name ?? '').split(/[:\s]/)[0], t.status])).toEqual([
      ['write_file', 'completed'],
      ['replace', 'completed'],
      ['run_shell_command', 'completed'],
      ['run_shell_command', 'completed'],
    ]);

    const runChange = (runId: string) => detail.changes.find((c) => c.tool_call_id === null && c.run_id === runId)!;
    expect(filesOf(runChange(run1!.run_id))).toEqual([
      ['notes.txt', 'added', 2, 0],
      ['src/app.txt', 'modified', 1, 1],
    ]);
    expect(filesOf(runChange(run2!.run_id))).toEqual([
      ['old.txt', 'deleted', 0, 1],
      ['README.md', 'modified', 1, 1],
    ]);
  }, 240_000);
});
