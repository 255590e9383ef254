/**
 * The whole path with the real Codex CLI: `rundiff hooks install codex`, then two prompts of one
 * real `codex exec` session (offline, against a scripted Responses API model). The first writes a
 * file through the shell, edits one with Codex's own `apply_patch` and looks at a picture with
 * `view_image` (read-only); a review of that run is sent over REST; the second prompt (resumed
 * session) carries it to the model, edits through the shell and deletes a file through the shell.
 * The running server's timeline, read over REST, must show exactly that.
 */
import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SessionDetailResponse, SessionListResponse, SessionReviewResponse } from '../../shared/index.ts';
import {
  agentCliSupported,
  agentHooksStatus,
  cleanupsAfterEach,
  ensureAgentCli,
  filesOf,
  installAgentHooks,
  REVIEW_COMMENT,
  sendReviewOfFirstRun,
} from '../test-support/agent-cli.ts';
import { runCodex, trustCodexHooks } from '../test-support/codex.ts';
import { startScriptedResponses } from '../test-support/scripted-openai-responses.ts';
import { startTestServer } from '../test-support/server-harness.ts';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';

const cleanups = cleanupsAfterEach();

/** A valid 1x1 PNG, so `view_image` really reads a picture. */
const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

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

describe.skipIf(!agentCliSupported)('Codex with rundiff hooks (real CLI, offline, real server)', () => {
  let bin = '';
  beforeAll(async () => {
    bin = await ensureAgentCli('codex');
  }, 600_000);

  /** A git workspace, a HOME of its own, and `rundiff hooks install codex` into both. */
  async function setUp() {
    const server = await startTestServer();
    cleanups.push(() => server.close());
    const serverUrl = `http://127.0.0.1:${server.server.port}`;
    const repo = createTempRepo({
      files: { 'README.md': 'hello\n', 'src/app.txt': 'alpha\nbeta\n', 'old.txt': 'stale\n', 'pixel.png': PNG_1X1 },
    });
    repo.commit('start');
    cleanups.push(() => repo.cleanup());
    const home = createTempDir('rundiff-agent-home-');
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const install = await installAgentHooks('codex', repo.dir, serverUrl, home);
    expect(install, install.stderr).toMatchObject({ code: 0 });
    return { server, repo, home, install };
  }

  it('two prompts give one session, a block per editing tool, none for view_image, and the review reaches the second prompt', async () => {
    const { server, repo, home } = await setUp();
    const ws = repo.dir;
    const model = await startScriptedResponses([
      {
        match: 'first prompt',
        turns: [
          {
            tool: 'exec_command',
            input: { cmd: "printf 'one\\ntwo\\n' > notes.txt" },
            usage: { input: 1200, cached: 1000, output: 30, reasoning: 8 },
          },
          { tool: 'apply_patch', input: PATCH.join('\n'), usage: { input: 1300, cached: 1200, output: 12 } },
          { tool: 'view_image', input: { path: 'pixel.png' }, usage: { input: 1400, cached: 1300, output: 5 } },
          { text: 'First reply.', usage: { input: 1500, cached: 1400, output: 3 } },
        ],
      },
      {
        match: 'second prompt',
        turns: [
          { tool: 'exec_command', input: { cmd: "sed -i 's/hello/goodbye/' README.md" } },
          { tool: 'exec_command', input: { cmd: 'rm old.txt' } },
          { text: 'Second reply.', usage: { input: 2000, cached: 0, output: 40, reasoning: 25 } },
        ],
      },
    ]);
    cleanups.push(() => model.close());
    const opts = { bin, cwd: ws, home, modelUrl: model.url, trustHooks: true };

    const first = await runCodex('Please handle the first prompt.', opts);
    // The hooks did not disturb the agent: it finished normally and printed its own reply only.
    expect(first, first.stderr).toMatchObject({ code: 0 });
    expect(first.stdout.trim()).toBe('First reply.');
    expect(repo.read('notes.txt').toString()).toBe('one\ntwo\n');
    expect(repo.read('src/app.txt').toString()).toBe('alpha\ngamma\n');
    const firstRequests = model.requests.length;

    const list = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    expect(list.sessions).toHaveLength(1);
    const sessionId = list.sessions[0]!.id;
    expect(sessionId).toMatch(/^codex:/);
    const base = `/api/hermes/sessions/${encodeURIComponent(sessionId)}`;

    // A comment on the line apply_patch changed, sent as a review before the next prompt.
    const review = await sendReviewOfFirstRun(
      server,
      base,
      { path: 'src/app.txt', line: 2, body: REVIEW_COMMENT },
      'One thing before you go on.',
    );

    const second = await runCodex('Now the second prompt.', { ...opts, resume: true });
    expect(second, second.stderr).toMatchObject({ code: 0 });
    expect(second.stdout.trim()).toBe('Second reply.');
    expect(repo.read('README.md').toString()).toBe('goodbye\n');
    expect(fs.existsSync(`${ws}/old.txt`)).toBe(false);

    // The review reached the model with the second prompt, and not before.
    const carries = (r: { body: unknown }) => JSON.stringify(r.body).includes('gamma-ray-7731');
    expect(model.requests.slice(0, firstRequests).some(carries)).toBe(false);
    const secondFirst = JSON.stringify(model.requests[firstRequests]!.body);
    expect(secondFirst).toContain(REVIEW_COMMENT);
    expect(secondFirst).toContain('One thing before you go on.');
    expect(secondFirst).toContain('Now the second prompt.');
    const reviewAfter = (await server.get(`${base}/review`)).body as SessionReviewResponse;
    expect(reviewAfter.reviews).toEqual([
      expect.objectContaining({ id: review.id, state: 'delivered', delivered_via: 'hook', delivered_to: 'codex' }),
    ]);

    // The resumed prompt is the same session: one session, two runs with their prompts and replies.
    const after = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    expect(after.sessions.map((s) => s.id)).toEqual([sessionId]);
    const detail = (await server.get(base)).body as SessionDetailResponse;
    expect(detail.runs.map((r) => [r.status, r.workspace])).toEqual([
      ['completed', ws],
      ['completed', ws],
    ]);
    const [run1, run2] = detail.runs;
    // Each run's tokens, from Codex's session log: what the scripted answers reported, cached input apart.
    expect(detail.runs.map((r) => r.usage)).toEqual([
      { input: 500, output: 50, cache_read: 4900, cache_write: 0 },
      { input: 2020, output: 60, cache_read: 0, cache_write: 0 },
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

    // One block per editing tool, under the call id the model gave it; view_image has none.
    const ids = model.toolUses.map((t) => t.id);
    const imageId = model.toolUses.find((t) => t.name === 'view_image')!.id;
    const toolChanges = detail.changes.filter((c) => c.tool_call_id !== null);
    expect(toolChanges.map((c) => [c.run_id, c.tool_call_id, filesOf(c)])).toEqual([
      [run1!.run_id, ids[0], [['notes.txt', 'added', 2, 0]]],
      [run1!.run_id, ids[1], [['src/app.txt', 'modified', 1, 1]]],
      [run2!.run_id, ids[3], [['README.md', 'modified', 1, 1]]],
      [run2!.run_id, ids[4], [['old.txt', 'deleted', 0, 1]]],
    ]);
    expect(detail.changes.some((c) => c.tool_call_id === imageId)).toBe(false);
    expect(detail.tool_calls.map((t) => [t.tool_call_id, t.status])).toEqual(
      toolChanges.map((c) => [c.tool_call_id, 'completed']),
    );
    // The cards name the tool and what it worked on: apply_patch by its files, not the patch text.
    expect(detail.tool_calls.map((t) => t.name)).toEqual([
      expect.stringMatching(/^Bash\b.*notes\.txt/),
      'apply_patch: src/app.txt',
      expect.stringMatching(/^Bash\b.*sed -i/),
      expect.stringMatching(/^Bash\b.*rm old\.txt/),
    ]);

    // Each run's change lists exactly the files of that prompt.
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

  it('hooks Codex has not trusted record nothing, and install and status say so; trusted, they record', async () => {
    const { server, repo, home, install } = await setUp();
    const serverUrl = `http://127.0.0.1:${server.server.port}`;
    // Install says what Codex will do with the new hooks and how to trust them.
    expect(install.stdout).toMatch(/codex: Codex runs new or changed hooks only once they are trusted/);
    expect(install.stdout).toContain("'Trust all and continue' at 'Hooks need review'");
    const before = await agentHooksStatus(repo.dir, serverUrl, home);
    expect(before.stdout).toMatch(/^codex +trust +NOT TRUSTED \(0 of 4 trusted\): Codex skips them silently/m);

    const model = await startScriptedResponses([
      {
        match: 'write it',
        turns: [{ tool: 'exec_command', input: { cmd: "printf 'a\\n' > a.txt" } }, { text: 'Written.' }],
      },
    ]);
    cleanups.push(() => model.close());
    const opts = { bin, cwd: repo.dir, home, modelUrl: model.url, trustHooks: false };
    // The control: Codex itself ran the tool and finished, but no hook reached the server.
    const untrusted = await runCodex('Please write it.', opts);
    expect(untrusted, untrusted.stderr).toMatchObject({ code: 0 });
    expect(repo.read('a.txt').toString()).toBe('a\n');
    expect(((await server.get('/api/hermes/sessions')).body as SessionListResponse).sessions).toEqual([]);

    // Trusted as a person does it in Codex: what Codex listed before is what status said.
    expect(await trustCodexHooks(bin, home, repo.dir)).toEqual(['untrusted', 'untrusted', 'untrusted', 'untrusted']);
    const after = await agentHooksStatus(repo.dir, serverUrl, home);
    expect(after.stdout).toMatch(/^codex +trust +trusted in ~\/\.codex\/config\.toml/m);
    const trusted = await runCodex('Please write it.', opts);
    expect(trusted, trusted.stderr).toMatchObject({ code: 0 });
    const list = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    expect(list.sessions).toHaveLength(1);
    const detail = (await server.get(`/api/hermes/sessions/${encodeURIComponent(list.sessions[0]!.id)}`))
      .body as SessionDetailResponse;
    expect(detail.runs.map((r) => r.status)).toEqual(['completed']);

    // Installed again with another server: the hooks changed, so Codex will ask again, and install says so.
    const again = await installAgentHooks('codex', repo.dir, 'http://127.0.0.1:1', home);
    expect(again.stdout).toMatch(/codex: Codex runs new or changed hooks only once they are trusted/);
  }, 240_000);
});
