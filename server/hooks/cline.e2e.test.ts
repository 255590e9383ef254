/**
 * The whole path with the real Cline CLI: `rundiff hooks install cline`, then two prompts of one
 * real Cline session (its ACP mode, offline, against a scripted chat-completions model). The first
 * writes a file through the shell, reads one with `read_files` (read-only) and edits it with
 * Cline's own `apply_patch`; a review of that run is sent over REST; the second prompt pulls the
 * review through `rundiff mcp` (configured in Cline's MCP settings, with Cline's default 3 s start
 * timeout), edits through the shell and deletes a file through the shell. The running server's
 * timeline, read over REST, must show exactly that.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
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
import {
  configureClineModel,
  startClineAcp,
  stopClineHubDaemon,
  writeClineMcpSettings,
} from '../test-support/cline.ts';
import { startScriptedChat } from '../test-support/scripted-openai-chat.ts';
import { startTestServer } from '../test-support/server-harness.ts';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';

const cleanups = cleanupsAfterEach();

/**
 * Cline answers `session/prompt` without waiting for its TaskComplete hook to finish: the run is
 * closed (and its change made) a moment later. Resolves once the session has `runs` closed runs.
 */
async function closedRuns(server: { get(p: string): Promise<{ body: unknown }> }, base: string, runs: number) {
  await vi.waitFor(
    async () => {
      const detail = (await server.get(base)).body as SessionDetailResponse;
      expect(detail.runs.filter((r) => r.status !== 'running')).toHaveLength(runs);
    },
    { timeout: 30_000, interval: 100 },
  );
}

const PATCH = [
  '*** Begin Patch',
  '*** Update File: src/app.txt',
  '@@',
  ' alpha',
  '-beta',
  '+gamma',
  '*** End Patch',
  '',
];

describe.skipIf(!agentCliSupported)('Cline with rundiff hooks (real CLI, offline, real server)', () => {
  let bin = '';
  beforeAll(async () => {
    bin = await ensureAgentCli('cline');
  }, 600_000);

  it('two prompts give one session keyed by the root session id, a block per editing tool, none for read_files, and the review reaches the second prompt by MCP', async () => {
    const server = await startTestServer();
    cleanups.push(() => server.close());
    const serverUrl = `http://127.0.0.1:${server.server.port}`;
    const repo = createTempRepo({
      files: { 'README.md': 'hello\n', 'src/app.txt': 'alpha\nbeta\n', 'old.txt': 'stale\n' },
    });
    repo.commit('start');
    cleanups.push(() => repo.cleanup());
    const ws = repo.dir;
    const home = createTempDir('rundiff-agent-home-');
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const install = await installAgentHooks('cline', ws, serverUrl, home);
    expect(install, install.stderr).toMatchObject({ code: 0 });

    const model = await startScriptedChat([
      {
        match: 'first prompt',
        turns: [
          { tool: 'run_commands', input: { commands: ["printf 'one\\ntwo\\n' > notes.txt"] } },
          { tool: 'read_files', input: { files: [{ path: path.join(ws, 'src/app.txt') }] } },
          { tool: 'apply_patch', input: { input: PATCH.join('\n') } },
          { text: 'First reply.' },
        ],
      },
      {
        match: 'second prompt',
        turns: [
          { tool: 'rundiff__review_comments', input: {} },
          { tool: 'run_commands', input: { commands: ["sed -i 's/hello/goodbye/' README.md"] } },
          { tool: 'run_commands', input: { commands: ['rm old.txt'] } },
          { text: 'Second reply.' },
        ],
      },
    ]);
    cleanups.push(() => model.close());
    const opts = { bin, cwd: ws, home };
    const auth = await configureClineModel(opts, model.url);
    expect(auth, auth.stderr).toMatchObject({ code: 0 });
    // No "timeout" field: Cline's default (3 s to answer initialize) must be enough for rundiff mcp.
    writeClineMcpSettings(home, {
      rundiff: [process.execPath, RUNDIFF_BIN, 'mcp', '--workspace', ws, '--server', serverUrl],
    });
    // The daemon Cline leaves behind is stopped after the agent (cleanups run last-in first-out).
    cleanups.push(async () => void (await stopClineHubDaemon(ws)));
    const cline = await startClineAcp(opts);
    cleanups.push(() => cline.close());
    const clineSession = await cline.newSession();

    expect(await cline.prompt(clineSession, 'Please handle the first prompt.')).toBe('end_turn');
    expect(cline.replies[0]).toBe('First reply.');
    expect(repo.read('notes.txt').toString()).toBe('one\ntwo\n');
    expect(repo.read('src/app.txt').toString()).toBe('alpha\ngamma\n');
    const firstRequests = model.requests.length;

    const list = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    // The session is Cline's root session (sessionContext.rootSessionId), the id ACP gave it.
    expect(list.sessions.map((s) => s.id)).toEqual([`cline:${clineSession}`]);
    const sessionId = list.sessions[0]!.id;
    const base = `/api/hermes/sessions/${encodeURIComponent(sessionId)}`;
    await closedRuns(server, base, 1);

    const review = await sendReviewOfFirstRun(
      server,
      base,
      { path: 'src/app.txt', line: 2, body: REVIEW_COMMENT },
      'One thing before you go on.',
    );

    expect(await cline.prompt(clineSession, 'Now the second prompt.')).toBe('end_turn');
    expect(cline.replies[1]).toBe('Second reply.');
    expect(repo.read('README.md').toString()).toBe('goodbye\n');
    expect(fs.existsSync(path.join(ws, 'old.txt'))).toBe(false);
    await closedRuns(server, base, 2);

    // rundiff mcp started within Cline's default timeout: its tools were offered to the model.
    const offered = (model.requests.find((r) => r.main)!.body as { tools: { function: { name: string } }[] }).tools;
    expect(offered.map((t) => t.function.name)).toContain('rundiff__review_comments');
    // The review reached the model through the MCP tool's answer in the second prompt, and not before.
    const carries = (r: { body: unknown }) => JSON.stringify(r.body).includes('gamma-ray-7731');
    expect(model.requests.slice(0, firstRequests).some(carries)).toBe(false);
    const mainOfSecond = model.requests.slice(firstRequests).filter((r) => r.main);
    expect(carries(mainOfSecond[0]!)).toBe(false);
    const afterTool = JSON.stringify(mainOfSecond[1]!.body);
    expect(afterTool).toContain(REVIEW_COMMENT);
    expect(afterTool).toContain('One thing before you go on.');
    const reviewAfter = (await server.get(`${base}/review`)).body as SessionReviewResponse;
    expect(reviewAfter.reviews).toEqual([
      expect.objectContaining({ id: review.id, state: 'delivered', delivered_via: 'mcp' }),
    ]);

    const after = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    expect(after.sessions.map((s) => s.id)).toEqual([sessionId]);
    const detail = (await server.get(base)).body as SessionDetailResponse;
    expect(detail.runs.map((r) => [r.status, r.workspace])).toEqual([
      ['completed', ws],
      ['completed', ws],
    ]);
    const [run1, run2] = detail.runs;
    // Cline 3.0.65 reports no prompt text: no prompt hook fires and its task start carries none.
    const said = (role: string) => detail.messages.filter((m) => m.role === role).map((m) => [m.run_id, m.content]);
    expect(said('user')).toEqual([]);
    expect(said('assistant')).toEqual([
      [run1!.run_id, 'First reply.'],
      [run2!.run_id, 'Second reply.'],
    ]);

    // One block per editing tool under the call id the model gave it; read_files has none. The
    // MCP call changed nothing: its block, if any, lists no file.
    const ids = model.toolUses.map((t) => t.id);
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
  }, 300_000);
});
