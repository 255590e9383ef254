/**
 * A review reaches the real agent: `rundiff hooks install claude-code` in a git workspace, a first
 * prompt of a real Claude Code session (offline, against a scripted model) edits a file, a comment
 * is written on a line of that run's patch and sent over REST, and the second prompt of the same
 * session carries the review to the model: the model server receives the comment's text in that
 * prompt's request, and the review reads as delivered by the hook. A review over Claude Code's cap
 * on hook context arrives whole in parts, one per prompt.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Review, SessionListResponse, SessionReviewResponse } from '../../shared/index.ts';
import {
  claudeCodeSupported,
  ensureClaudeCode,
  installClaudeCodeHooks,
  runClaudeCode,
} from '../test-support/claude-code.ts';
import { startScriptedAnthropic } from '../test-support/scripted-anthropic.ts';
import { startTestServer } from '../test-support/server-harness.ts';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** Words that appear nowhere but in the comment, so finding them in a request proves the review got there. */
const COMMENT = 'Rename gamma-ray-7731 to delta before merging, please.';

describe.skipIf(!claudeCodeSupported)('a review sent back to Claude Code (real CLI, offline, real server)', () => {
  let bin = '';
  beforeAll(async () => {
    bin = await ensureClaudeCode();
  }, 600_000);

  it("the next prompt's request to the model carries the comment, and the review reads as delivered by the hook", async () => {
    const server = await startTestServer();
    cleanups.push(() => server.close());
    const serverUrl = `http://127.0.0.1:${server.server.port}`;
    const repo = createTempRepo({ files: { 'src/app.txt': 'alpha\nbeta\n' } });
    cleanups.push(() => repo.cleanup());
    const home = createTempDir('rundiff-agent-home-');
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const ws = repo.dir;
    const install = await installClaudeCodeHooks(ws, serverUrl, home);
    expect(install, install.stderr).toMatchObject({ code: 0 });

    const model = await startScriptedAnthropic([
      {
        match: 'first prompt',
        turns: [
          // The CLI edits only a file it has read.
          { tool: 'Read', input: { file_path: path.join(ws, 'src/app.txt') } },
          { tool: 'Edit', input: { file_path: path.join(ws, 'src/app.txt'), old_string: 'beta', new_string: 'gamma' } },
          { text: 'First reply.' },
        ],
      },
      { match: 'second prompt', turns: [{ text: 'Second reply.' }] },
    ]);
    cleanups.push(() => model.close());
    const opts = { bin, cwd: ws, home, modelUrl: model.url };

    const first = await runClaudeCode('Please handle the first prompt.', opts);
    expect(first, first.stderr).toMatchObject({ code: 0 });
    expect(repo.read('src/app.txt').toString()).toBe('alpha\ngamma\n');
    const firstRequests = model.requests.length;

    const sessions = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    expect(sessions.sessions).toHaveLength(1);
    const sessionId = sessions.sessions[0]!.id;
    const base = `/api/hermes/sessions/${encodeURIComponent(sessionId)}`;
    const detail = (await server.get(base)).body as {
      changes: { change_id: string; tool_call_id: string | null; files: { id: string; path: string }[] }[];
    };
    const runChange = detail.changes.find((c) => c.tool_call_id === null)!;
    const file = runChange.files.find((f) => f.path === 'src/app.txt')!;
    const post = (p: string, body: unknown) =>
      server.request('POST', p, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const made = await post(`${base}/comments`, {
      change_id: runChange.change_id,
      file_id: file.id,
      side: 'after',
      start_line: 2,
      end_line: 2,
      body: COMMENT,
    });
    expect(made.status, made.text).toBe(201);
    expect(made.body.comment.anchor.lines).toEqual(['gamma']);
    const sent = await post(`${base}/reviews`, { note: 'One thing before you go on.' });
    expect(sent.status, sent.text).toBe(201);
    const review = sent.body.review as Review;

    const second = await runClaudeCode('Now the second prompt.', { ...opts, args: ['--continue'] });
    expect(second, second.stderr).toMatchObject({ code: 0 });
    expect(second.stdout.trim()).toBe('Second reply.');

    const carries = (r: { body: unknown }) => JSON.stringify(r.body).includes('gamma-ray-7731');
    // Positive control: before the review was sent, no request to the model held its text.
    expect(model.requests.slice(0, firstRequests).some(carries)).toBe(false);
    const mainOfSecond = model.requests.slice(firstRequests).filter((r) => r.main);
    expect(mainOfSecond.length).toBeGreaterThan(0);
    // The prompt's first request to the model holds the comment and the quoted line.
    const body = JSON.stringify(mainOfSecond[0]!.body);
    expect(body).toContain(JSON.stringify(COMMENT).slice(1, -1));
    expect(body).toContain('One thing before you go on.');
    expect(body).toContain('Now the second prompt.');

    const after = (await server.get(`${base}/review`)).body as SessionReviewResponse;
    expect(after.reviews).toEqual([
      expect.objectContaining({
        id: review.id,
        state: 'delivered',
        delivered_via: 'hook',
        delivered_to: 'claude-code',
        text: review.text,
      }),
    ]);
    expect(after.comments.map((c) => [c.state, c.delivered_via])).toEqual([['delivered', 'hook']]);
  }, 240_000);

  it("a review longer than Claude Code's 10,000-character cap reaches the model whole, in parts over the next two prompts", async () => {
    const server = await startTestServer();
    cleanups.push(() => server.close());
    const serverUrl = `http://127.0.0.1:${server.server.port}`;
    const repo = createTempRepo({ files: { 'src/app.txt': 'alpha\nbeta\n' } });
    cleanups.push(() => repo.cleanup());
    const home = createTempDir('rundiff-agent-home-');
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const ws = repo.dir;
    const install = await installClaudeCodeHooks(ws, serverUrl, home);
    expect(install, install.stderr).toMatchObject({ code: 0 });

    const model = await startScriptedAnthropic([
      {
        match: 'first prompt',
        turns: [
          { tool: 'Read', input: { file_path: path.join(ws, 'src/app.txt') } },
          { tool: 'Edit', input: { file_path: path.join(ws, 'src/app.txt'), old_string: 'beta', new_string: 'gamma' } },
          { text: 'First reply.' },
        ],
      },
      { match: 'second prompt', turns: [{ text: 'Second reply.' }] },
      { match: 'third prompt', turns: [{ text: 'Third reply.' }] },
    ]);
    cleanups.push(() => model.close());
    const opts = { bin, cwd: ws, home, modelUrl: model.url };

    const first = await runClaudeCode('Please handle the first prompt.', opts);
    expect(first, first.stderr).toMatchObject({ code: 0 });
    const sessions = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    const base = `/api/hermes/sessions/${encodeURIComponent(sessions.sessions[0]!.id)}`;
    const detail = (await server.get(base)).body as {
      changes: { change_id: string; tool_call_id: string | null; files: { id: string; path: string }[] }[];
    };
    const runChange = detail.changes.find((c) => c.tool_call_id === null)!;
    const file = runChange.files.find((f) => f.path === 'src/app.txt')!;
    const post = (p: string, body: unknown) =>
      server.request('POST', p, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    // Two comments of about 6,000 characters each: together over Claude Code's cap, each under it.
    const bodies = ['first-part-4417', 'second-part-9023'].map(
      (tag) => `${tag} ${Array.from({ length: 1100 }, (_, i) => `w${i}`).join(' ')} end-of-${tag}`,
    );
    for (const body of bodies) {
      const made = await post(`${base}/comments`, {
        change_id: runChange.change_id,
        file_id: file.id,
        side: 'after',
        start_line: 2,
        end_line: 2,
        body,
      });
      expect(made.status, made.text).toBe(201);
    }
    const sent = await post(`${base}/reviews`, { note: 'Two long remarks.' });
    expect(sent.status, sent.text).toBe(201);
    expect((sent.body.review as Review).text.length).toBeGreaterThan(10_000);

    const mainOf = (from: number) => model.requests.slice(from).filter((r) => r.main);
    let before = model.requests.length;
    const second = await runClaudeCode('Now the second prompt.', { ...opts, args: ['--continue'] });
    expect(second, second.stderr).toMatchObject({ code: 0 });
    const secondBody = JSON.stringify(mainOf(before)[0]!.body);
    before = model.requests.length;
    const third = await runClaudeCode('And the third prompt.', { ...opts, args: ['--continue'] });
    expect(third, third.stderr).toMatchObject({ code: 0 });
    const thirdBody = JSON.stringify(mainOf(before)[0]!.body);

    // Each prompt's request holds its part whole (first and last word), never a persisted-output stub.
    for (const body of [secondBody, thirdBody]) expect(body.includes('persisted-output')).toBe(false);
    expect(secondBody.includes(bodies[0]!)).toBe(true);
    expect(secondBody.includes('Two long remarks.')).toBe(true);
    expect(secondBody.includes('1 more comment of this review did not fit')).toBe(true);
    expect(secondBody.includes('second-part-9023')).toBe(false);
    expect(thirdBody.includes(bodies[1]!)).toBe(true);

    const after = (await server.get(`${base}/review`)).body as SessionReviewResponse;
    expect(after.reviews.map((r) => [r.state, r.delivered_via, r.comment_ids.length])).toEqual([
      ['delivered', 'hook', 1],
      ['delivered', 'hook', 1],
    ]);
    expect(after.comments.map((c) => c.state)).toEqual(['delivered', 'delivered']);
  }, 240_000);

  it('"deliver now": a review sent while the agent works reaches it when it stops, and it goes on with the review', async () => {
    const server = await startTestServer();
    cleanups.push(() => server.close());
    const serverUrl = `http://127.0.0.1:${server.server.port}`;
    const repo = createTempRepo({ files: { 'src/app.txt': 'alpha\nbeta\n' } });
    cleanups.push(() => repo.cleanup());
    const home = createTempDir('rundiff-agent-home-');
    cleanups.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const ws = repo.dir;
    const install = await installClaudeCodeHooks(ws, serverUrl, home);
    expect(install, install.stderr).toMatchObject({ code: 0 });
    const post = (p: string, body: unknown) =>
      server.request('POST', p, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    let sent: Review | null = null;
    const model = await startScriptedAnthropic(
      [
        {
          match: 'only prompt',
          turns: [
            { tool: 'Read', input: { file_path: path.join(ws, 'src/app.txt') } },
            {
              tool: 'Edit',
              input: { file_path: path.join(ws, 'src/app.txt'), old_string: 'beta', new_string: 'gamma' },
            },
            { text: 'Done editing.' },
          ],
        },
        // The Stop hook's answer comes back to the model as the next instruction.
        { match: 'gamma-ray-7731', turns: [{ text: 'Review handled.' }] },
      ],
      {
        // Once the edit is reported (its change stored), the person comments on it and sends the
        // review with "deliver now" while the agent is still working.
        beforeAnswer: async () => {
          const edit = model.toolUses.find((t) => t.name === 'Edit');
          if (sent !== null || !edit) return;
          const list = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
          const base = `/api/hermes/sessions/${encodeURIComponent(list.sessions[0]!.id)}`;
          const changeId = `tool:${edit.id}`;
          const files = (await server.get(`${base}/workspace-run-changes/${encodeURIComponent(changeId)}/files`)).body
            .files as { id: string }[];
          const made = await post(`${base}/comments`, {
            change_id: changeId,
            file_id: files[0]!.id,
            side: 'after',
            start_line: 2,
            end_line: 2,
            body: COMMENT,
          });
          expect(made.status, made.text).toBe(201);
          sent = (await post(`${base}/reviews`, { mode: 'now' })).body.review as Review;
        },
      },
    );
    cleanups.push(() => model.close());

    const out = await runClaudeCode('The only prompt.', { bin, cwd: ws, home, modelUrl: model.url });
    expect(out, out.stderr).toMatchObject({ code: 0 });
    expect(sent).not.toBeNull();
    // The agent went on after its stop: the model was asked again, with the review, and answered it.
    expect(out.stdout.trim()).toBe('Review handled.');
    const withReview = model.requests.filter((r) => r.main && JSON.stringify(r.body).includes('gamma-ray-7731'));
    expect(withReview.length).toBeGreaterThan(0);

    const list = (await server.get('/api/hermes/sessions')).body as SessionListResponse;
    const after = (await server.get(`/api/hermes/sessions/${encodeURIComponent(list.sessions[0]!.id)}/review`))
      .body as SessionReviewResponse;
    expect(after.reviews).toEqual([
      expect.objectContaining({
        id: sent!.id,
        mode: 'now',
        state: 'delivered',
        delivered_via: 'hook',
        delivered_to: 'claude-code',
      }),
    ]);
  }, 240_000);
});
