import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startMcpClient } from '../test-support/mcp-client.ts';
import type { Review, ReviewComment, SessionReviewResponse } from '../../shared/index.ts';
import { connectClient, startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';

/**
 * `review_comments` and `review_comments_addressed` on `rundiff mcp`, driven by the MCP SDK's
 * Client (which checks structured content against the listed output schemas): with `--server` the
 * running server hands the reviews over and tells the web UI; with `--db` the database is written
 * directly and the server reads the result.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function repo(): TempRepo {
  const r = createTempRepo({ files: { 'a.txt': 'one\ntwo\n' } });
  cleanups.push(() => r.cleanup());
  return r;
}

async function mcp(args: string[]): Promise<Client> {
  const { client, close } = await startMcpClient(args, {}, 'review-client', '2.0.0');
  cleanups.push(close);
  return client;
}

/** A session in `r` whose run changed a.txt, with one comment sent as a review. */
async function sentReview(t: TestServer, r: TempRepo): Promise<{ review: Review; comment: ReviewComment }> {
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: r.dir });
  await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
  r.write('a.txt', 'one\nTWO\n');
  await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
  const fileId = (await t.get('/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1/files')).body.files[0].id;
  const post = (p: string, body: unknown) =>
    t.request('POST', p, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const made = await post('/api/hermes/sessions/s1/comments', {
    change_id: 'run:r1',
    file_id: fileId,
    side: 'after',
    start_line: 2,
    end_line: 2,
    body: 'Why shout here?',
  });
  const sent = await post('/api/hermes/sessions/s1/reviews', { note: 'Small things.' });
  return { review: sent.body.review as Review, comment: made.body.comment as ReviewComment };
}

type Result = Awaited<ReturnType<Client['callTool']>>;
const textOf = (r: Result) => (r.content as { text: string }[])[0]!.text;
const deliveriesOf = (r: Result) =>
  (r.structuredContent as { deliveries: { session_id: string; text: string }[] }).deliveries;

describe('review tools of rundiff mcp', () => {
  it("--server: review_comments hands over the workspace's pending review once, by mcp; addressed reaches the UI", async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const r = repo();
    const { review, comment } = await sentReview(t, r);
    const ui = await connectClient(t.server.url);
    cleanups.push(() => ui.close());
    await ui.ask('session.subscribe', { session_id: 's1' });

    // Positive control: an MCP server for another workspace finds nothing and delivers nothing.
    const other = await mcp(['--workspace', repo().dir, '--server', t.server.url]);
    const none = await other.callTool({ name: 'review_comments', arguments: {} });
    expect(deliveriesOf(none)).toEqual([]);
    expect(textOf(none)).toBe('No review is waiting for this workspace.');

    const client = await mcp(['--workspace', r.dir, '--server', t.server.url]);
    const listed = (await client.listTools()).tools.map((x) => x.name);
    expect(listed).toEqual(expect.arrayContaining(['review_comments', 'review_comments_addressed']));
    const got = await client.callTool({ name: 'review_comments', arguments: {} });
    expect(got.isError).toBeFalsy();
    expect(deliveriesOf(got)).toEqual([expect.objectContaining({ session_id: 's1', text: review.text })]);
    expect(textOf(got)).toBe(review.text);
    expect(review.text).toContain('Why shout here?');
    const state = (await t.get('/api/hermes/sessions/s1/review')).body as SessionReviewResponse;
    expect(state.reviews[0]).toMatchObject({
      state: 'delivered',
      delivered_via: 'mcp',
      delivered_to: 'review-client 2.0.0',
    });
    expect(deliveriesOf(await client.callTool({ name: 'review_comments', arguments: {} }))).toEqual([]);

    const bad = await client.callTool({ name: 'review_comments_addressed', arguments: { comment_ids: [] } });
    expect(bad.isError).toBe(true);
    expect(JSON.parse(textOf(bad)).error.code).toBe('invalid_input');
    const done = await client.callTool({
      name: 'review_comments_addressed',
      arguments: { comment_ids: [comment.id, 'nope'] },
    });
    expect(done.structuredContent).toMatchObject({
      comments: [{ id: comment.id, state: 'addressed' }],
      not_found: ['nope'],
    });
    const updates = await ui.waitFor('comment.updated', 2);
    expect(updates.at(-1)!.payload).toMatchObject({ comment: { id: comment.id, state: 'addressed' } });
  });

  it('--db: without a server the tools read and write the database, and the server sees the delivery', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const r = repo();
    const { review } = await sentReview(t, r);
    const client = await mcp(['--workspace', r.dir, '--db', t.dbPath]);
    const got = await client.callTool({ name: 'review_comments', arguments: {} });
    expect(deliveriesOf(got)).toEqual([expect.objectContaining({ session_id: 's1', text: review.text })]);
    const state = (await t.get('/api/hermes/sessions/s1/review')).body as SessionReviewResponse;
    expect(state.reviews[0]).toMatchObject({
      state: 'delivered',
      delivered_via: 'mcp',
      delivered_to: 'review-client 2.0.0',
    });
    expect(state.comments[0]).toMatchObject({ state: 'delivered', delivered_via: 'mcp' });
  });
});
