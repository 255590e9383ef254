/**
 * The whole path with the real opencode CLI: `rundiff hooks install opencode`, then two prompts of
 * one real opencode session (offline, against a scripted chat-completions model). The first writes
 * a file with opencode's `write`, reads one with `read` (read-only) and edits it with its own
 * `edit`; a review of that run is sent over REST; the second prompt (`--continue`) pulls the review
 * through `rundiff mcp` (configured in opencode.json, opencode's MCP format), edits through the
 * shell and deletes a file through the shell. The running server's timeline, read over REST, must
 * show exactly that, and opencode must have installed nothing into the project for the plugin.
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
  REVIEW_COMMENT,
  sendReviewOfFirstRun,
} from '../test-support/agent-cli.ts';
import { RUNDIFF_BIN } from '../test-support/cli-process.ts';
import { runOpencode, writeOpencodeConfig } from '../test-support/opencode.ts';
import { startScriptedChat } from '../test-support/scripted-openai-chat.ts';
import { startTestServer } from '../test-support/server-harness.ts';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';

const cleanups = cleanupsAfterEach();

describe.skipIf(!agentCliSupported)('opencode with the rundiff plugin (real CLI, offline, real server)', () => {
  let bin = '';
  beforeAll(async () => {
    bin = await ensureAgentCli('opencode');
  }, 600_000);

  it('two prompts give one session, a block per editing tool, none for read, the review reaches the second prompt by MCP, and nothing is installed into the project', async () => {
    const server = await startTestServer();
    cleanups.push(() => server.close());
    const serverUrl = `http://127.0.0.1:${server.server.port}`;
    const repo = createTempRepo({
      files: { 'README.md': 'hello\n', 'src/app.txt': 'alpha\nbeta\n', 'old.txt': 'stale\n' },
    });
    cleanups.push(() => repo.cleanup());
    const ws = repo.dir;
    const home = createTempDir('rundiff-agent-home-');
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const mcp = [process.execPath, RUNDIFF_BIN, 'mcp', '--workspace', ws, '--server', serverUrl];
    const script = await startScriptedChat([
      {
        match: 'first prompt',
        turns: [
          { tool: 'write', input: { filePath: path.join(ws, 'notes.txt'), content: 'one\ntwo\n' } },
          { tool: 'read', input: { filePath: path.join(ws, 'src/app.txt') } },
          { tool: 'edit', input: { filePath: path.join(ws, 'src/app.txt'), oldString: 'beta', newString: 'gamma' } },
          { text: 'First reply.' },
        ],
      },
      {
        match: 'second prompt',
        turns: [
          { tool: 'rundiff_review_comments', input: {} },
          { tool: 'bash', input: { command: "sed -i 's/hello/goodbye/' README.md", description: 'Edit the readme' } },
          { tool: 'bash', input: { command: 'rm old.txt', description: 'Remove old.txt' } },
          { text: 'Second reply.' },
        ],
      },
    ]);
    cleanups.push(() => script.close());
    writeOpencodeConfig(ws, script.url, { rundiff: mcp });
    repo.commit('start');
    const install = await installAgentHooks('opencode', ws, serverUrl, home);
    expect(install, install.stderr).toMatchObject({ code: 0 });
    const opts = { bin, cwd: ws, home };

    const first = await runOpencode('Please handle the first prompt.', opts);
    // The plugin did not disturb the agent: it finished normally and printed its own reply only.
    expect(first, first.stderr).toMatchObject({ code: 0 });
    expect(first.stdout.trim()).toBe('First reply.');
    expect(repo.read('notes.txt').toString()).toBe('one\ntwo\n');
    expect(repo.read('src/app.txt').toString()).toBe('alpha\ngamma\n');
    const firstRequests = script.requests.length;

    const list = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    expect(list.sessions).toHaveLength(1);
    const sessionId = list.sessions[0]!.id;
    expect(sessionId).toMatch(/^opencode:/);
    const base = `/api/hermes/sessions/${encodeURIComponent(sessionId)}`;

    const review = await sendReviewOfFirstRun(
      server,
      base,
      { path: 'src/app.txt', line: 2, body: REVIEW_COMMENT },
      'One thing before you go on.',
    );

    const second = await runOpencode('Now the second prompt.', { ...opts, resume: true });
    expect(second, second.stderr).toMatchObject({ code: 0 });
    expect(second.stdout.trim()).toBe('Second reply.');
    expect(repo.read('README.md').toString()).toBe('goodbye\n');
    expect(fs.existsSync(path.join(ws, 'old.txt'))).toBe(false);

    // The review reached the model through the MCP tool's answer in the second prompt, and not before.
    const carries = (r: { body: unknown }) => JSON.stringify(r.body).includes('gamma-ray-7731');
    expect(script.requests.slice(0, firstRequests).some(carries)).toBe(false);
    const mainOfSecond = script.requests.slice(firstRequests).filter((r) => r.main);
    expect(carries(mainOfSecond[0]!)).toBe(false);
    const afterTool = JSON.stringify(mainOfSecond[1]!.body);
    expect(afterTool).toContain(REVIEW_COMMENT);
    expect(afterTool).toContain('One thing before you go on.');
    const reviewAfter = (await server.get(`${base}/review`)).body as SessionReviewResponse;
    expect(reviewAfter.reviews).toEqual([
      expect.objectContaining({ id: review.id, state: 'delivered', delivered_via: 'mcp' }),
    ]);
    expect(reviewAfter.reviews[0]!.delivered_to).toMatch(/^opencode\b/);

    const after = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    expect(after.sessions.map((s) => s.id)).toEqual([sessionId]);
    const detail = (await server.get(base)).body as SessionDetailResponse;
    expect(detail.runs.map((r) => [r.status, r.workspace])).toEqual([
      ['completed', ws],
      ['completed', ws],
    ]);
    const [run1, run2] = detail.runs;
    // Tokens per run: the sum of opencode's step-finish parts, one per model call of the prompt; the
    // scripted model reports 10 prompt and 10 completion tokens for each call.
    const calls = [script.requests.slice(0, firstRequests).filter((r) => r.main).length, mainOfSecond.length];
    expect(calls.every((n) => n > 1)).toBe(true);
    expect(detail.runs.map((r) => ({ ...r.usage, cost_usd: undefined }))).toEqual(
      calls.map((n) => ({ input: 10 * n, output: 10 * n, cache_read: 0, cache_write: 0, cost_usd: undefined })),
    );
    // And their price, as opencode computed it from the model's prices ($3 and $15 per million
    // input and output tokens): $0.00018 per call.
    detail.runs.forEach((r, i) => expect(r.usage?.cost_usd).toBeCloseTo(calls[i]! * 0.00018, 10));
    expect(detail.session.usage?.cost_usd).toBeCloseTo((calls[0]! + calls[1]!) * 0.00018, 10);
    const said = (role: string) => detail.messages.filter((m) => m.role === role).map((m) => [m.run_id, m.content]);
    // `opencode run` quotes a message argument that holds spaces before it sends it: the prompt is
    // recorded as opencode reports it, which is what the model received.
    expect(said('user')).toEqual([
      [run1!.run_id, '"Please handle the first prompt."'],
      [run2!.run_id, '"Now the second prompt."'],
    ]);
    const sent = JSON.stringify(mainOfSecond[0]!.body);
    expect(sent).toContain(JSON.stringify('"Now the second prompt."').slice(1, -1));
    expect(said('assistant')).toEqual([
      [run1!.run_id, 'First reply.'],
      [run2!.run_id, 'Second reply.'],
    ]);

    // One block per editing tool under the call id the model gave it; read has none. The MCP call
    // changed nothing: its block, if any, lists no file.
    const ids = Object.fromEntries(script.toolUses.map((t, i) => [i, t.id]));
    const toolChanges = detail.changes.filter((c) => c.tool_call_id !== null && c.files.length > 0);
    expect(toolChanges.map((c) => [c.run_id, c.tool_call_id, filesOf(c)])).toEqual([
      [run1!.run_id, ids[0], [['notes.txt', 'added', 2, 0]]],
      [run1!.run_id, ids[2], [['src/app.txt', 'modified', 1, 1]]],
      [run2!.run_id, ids[4], [['README.md', 'modified', 1, 1]]],
      [run2!.run_id, ids[5], [['old.txt', 'deleted', 0, 1]]],
    ]);
    expect(detail.tool_calls.some((t) => t.tool_call_id === ids[1])).toBe(false);
    expect(detail.tool_calls.filter((t) => t.tool_call_id !== ids[3]).map((t) => [t.tool_call_id, t.status])).toEqual(
      toolChanges.map((c) => [c.tool_call_id, 'completed']),
    );

    const runChange = (runId: string) => detail.changes.find((c) => c.tool_call_id === null && c.run_id === runId)!;
    expect(filesOf(runChange(run1!.run_id))).toEqual([
      ['notes.txt', 'added', 2, 0],
      ['src/app.txt', 'modified', 1, 1],
    ]);
    expect(filesOf(runChange(run2!.run_id))).toEqual([
      ['old.txt', 'deleted', 0, 1],
      ['README.md', 'modified', 1, 1],
    ]);

    // The plugin is loaded from rundiff's own folder: no .opencode/ folder, so opencode installed
    // no package into the project (it does so into any .opencode/ folder, 64 MB from the registry).
    expect(fs.existsSync(path.join(ws, '.opencode'))).toBe(false);
  }, 300_000);
});
