import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NetChange, NetFileSummary, NetViewedResponse } from '../../shared/index.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { countRows } from '../test-support/store-engines.ts';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';

/**
 * The Session changes view as a review view, over REST against the real server: viewed marks on net
 * files (kept per range start, stale once the net patch is another), and comments and context on the
 * net patch's lines through the stored rows whose sides the net patch's sides are.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(files: Record<string, string>): Promise<{ t: TestServer; repo: TempRepo }> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  return { t, repo };
}

async function run(t: TestServer, runId: string, edit: () => void): Promise<void> {
  expect((await t.post({ type: 'run.started', session_id: 's1', run_id: runId })).body.tracking).toBe(true);
  edit();
  expect((await t.post({ type: 'run.completed', session_id: 's1', run_id: runId })).status).toBe(200);
}

const base = '/api/hermes/sessions/s1';
const q = (range: { from?: string; to?: string }) => {
  const p = new URLSearchParams();
  if (range.from) p.set('from', range.from);
  if (range.to) p.set('to', range.to);
  const s = p.toString();
  return s ? `?${s}` : '';
};
const json = (t: TestServer, method: string, p: string, body: unknown) =>
  t.request(method, p, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function net(t: TestServer, range: { from?: string; to?: string } = {}): Promise<Map<string, NetFileSummary>> {
  const res = await t.get(`${base}/net-change${q(range)}`);
  expect(res.status).toBe(200);
  return new Map((res.body.change as NetChange).files.map((f) => [f.path, f]));
}
const viewed = async (t: TestServer, range: { from?: string; to?: string } = {}) =>
  (await t.get(`${base}/net-change/viewed${q(range)}`)).body as NetViewedResponse;
const states = (v: NetViewedResponse) =>
  Object.fromEntries(v.viewed.map((m) => [m.path, m.current ? 'viewed' : 'stale']));
const mark = (t: TestServer, f: NetFileSummary, range: { from?: string; to?: string } = {}) =>
  json(t, 'PUT', `${base}/net-change/viewed${q(range)}`, { file_id: f.id, net_hash: f.net_hash });

describe('viewed marks on the Session changes view', () => {
  it('a viewed net file stays viewed while its net patch is the same, and goes stale when a later run changes it again', async () => {
    const { t, repo } = await setup({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await run(t, 'r1', () => {
      repo.write('a.txt', 'a by r1\n');
      repo.write('b.txt', 'b by r1\n');
    });
    const first = await net(t);
    const put = await mark(t, first.get('a.txt')!);
    expect(put.status).toBe(200);
    expect(states(put.body as NetViewedResponse)).toEqual({ 'a.txt': 'viewed' });
    expect((put.body as NetViewedResponse).viewed[0]).toMatchObject({
      file_id: first.get('a.txt')!.id,
      to_change_id: 'run:r1',
      net_hash: first.get('a.txt')!.net_hash,
    });
    expect(states(await viewed(t))).toEqual({ 'a.txt': 'viewed' });

    // A run that changes only b.txt: a.txt's net patch is the same, its mark still counts.
    await run(t, 'r2', () => repo.write('b.txt', 'b by r2\n'));
    expect(states(await viewed(t))).toEqual({ 'a.txt': 'viewed' });

    // A run that changes a.txt again: the whole session's net patch of a.txt is another one.
    await run(t, 'r3', () => repo.write('a.txt', 'a by r3\n'));
    const now = await net(t);
    expect(now.get('a.txt')!.net_hash).not.toBe(first.get('a.txt')!.net_hash);
    expect(states(await viewed(t))).toEqual({ 'a.txt': 'stale' });
    // The range that ends where it was marked still shows the patch that was viewed.
    expect(states(await viewed(t, { to: 'run:r1' }))).toEqual({ 'a.txt': 'viewed' });

    // Marked again on the new patch: viewed; unmarked: gone from every range end of that start.
    expect(states((await mark(t, now.get('a.txt')!)).body as NetViewedResponse)).toEqual({ 'a.txt': 'viewed' });
    const del = await t.request('DELETE', `${base}/net-change/viewed?file_id=${now.get('a.txt')!.id}`);
    expect(del.status).toBe(200);
    expect((del.body as NetViewedResponse).viewed).toEqual([]);
    expect((await viewed(t, { to: 'run:r1' })).viewed).toEqual([]);
  });

  it('a mark is kept for its range start: a range from another run does not show it', async () => {
    const { t, repo } = await setup({ 'a.txt': 'a\n' });
    await run(t, 'r1', () => repo.write('a.txt', 'a by r1\n'));
    await run(t, 'r2', () => repo.write('a.txt', 'a by r2\n'));
    const fromR2 = await net(t, { from: 'run:r2' });
    await mark(t, fromR2.get('a.txt')!, { from: 'run:r2' });
    expect(states(await viewed(t, { from: 'run:r2' }))).toEqual({ 'a.txt': 'viewed' });
    expect((await viewed(t)).from_change_id).toBe('run:r1');
    expect((await viewed(t)).viewed).toEqual([]);
  });

  it('the hash the reader saw is what is kept: a mark made on an older patch is stale at once', async () => {
    const { t, repo } = await setup({ 'a.txt': 'a\n' });
    await run(t, 'r1', () => repo.write('a.txt', 'a by r1\n'));
    const seen = (await net(t)).get('a.txt')!;
    await run(t, 'r2', () => repo.write('a.txt', 'a by r2\n'));
    expect(states((await mark(t, seen)).body as NetViewedResponse)).toEqual({ 'a.txt': 'stale' });
  });

  it('refuses a mark without a valid hash or on a file the range does not have; marks go with their session', async () => {
    const { t, repo } = await setup({ 'a.txt': 'a\n' });
    await run(t, 'r1', () => repo.write('a.txt', 'a by r1\n'));
    const a = (await net(t)).get('a.txt')!;
    const bad = await json(t, 'PUT', `${base}/net-change/viewed`, { file_id: a.id, net_hash: 'xyz' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual({ field: 'net_hash' });
    expect(
      (await json(t, 'PUT', `${base}/net-change/viewed`, { file_id: 'net-nope', net_hash: a.net_hash })).status,
    ).toBe(404);
    expect((await json(t, 'PUT', `${base}/net-change/viewed`, [])).status).toBe(400);
    expect((await t.request('DELETE', `${base}/net-change/viewed`)).status).toBe(400);
    expect((await t.get('/api/hermes/sessions/nope/net-change/viewed')).status).toBe(404);

    expect((await mark(t, a)).status).toBe(200);
    expect(await countRows(t.server.store, 'net_viewed_marks')).toBe(1);
    expect((await t.request('DELETE', base)).status).toBe(204);
    expect(await countRows(t.server.store, 'net_viewed_marks')).toBe(0);
  });
});

describe('comments and context on the net patch', () => {
  const lines30 = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

  it('the net sides are the first and last runs` rows: a comment on either reads the net patch`s line, and its text names the file and line as it stands', async () => {
    const { t, repo } = await setup({ 'a.txt': lines30, 'c.txt': lines30 });
    await run(t, 'r1', () => {
      repo.write('a.txt', lines30.replace('line 3\n', 'line three\n'));
      fs.renameSync(path.join(repo.dir, 'c.txt'), path.join(repo.dir, 'd.txt'));
    });
    await run(t, 'r2', () => {
      repo.write('a.txt', lines30.replace('line 3\n', 'line three\n').replace('line 25\n', 'line 25 and more\n'));
      repo.write('d.txt', `${lines30}one more\n`);
    });
    const files = await net(t);
    const a = files.get('a.txt')!;
    const ids = async (runId: string) =>
      Object.fromEntries(
        (
          (await t.get(`${base}/workspace-run-changes/run%3A${runId}/files`)).body.files as {
            path: string;
            id: string;
          }[]
        ).map((f) => [f.path, f.id]),
      );
    const r1 = await ids('r1');
    const r2 = await ids('r2');
    expect(a.sides).toEqual({
      before: { change_id: 'run:r1', file_id: r1['a.txt'] },
      after: { change_id: 'run:r2', file_id: r2['a.txt'] },
    });
    // A rename the first run made: its old side is that row's before, its new side the last run's after.
    expect(files.get('d.txt')).toMatchObject({
      change_type: 'renamed',
      old_path: 'c.txt',
      sides: {
        before: { change_id: 'run:r1', file_id: r1['d.txt'] },
        after: { change_id: 'run:r2', file_id: r2['d.txt'] },
      },
    });

    // Line 3 was changed by r1 only: on r2's row it is outside r2's own hunks, yet it is the net
    // patch's new line 3 (the file as it stands), read from the kept contents.
    const after = await json(t, 'POST', `${base}/comments`, {
      ...a.sides.after,
      side: 'after',
      start_line: 3,
      end_line: 3,
      body: 'Spell it as a digit.',
    });
    expect(after.status).toBe(201);
    expect(after.body.comment.anchor).toMatchObject({ path: 'a.txt', side: 'after', lines: ['line three'] });
    const before = await json(t, 'POST', `${base}/comments`, {
      ...a.sides.before,
      side: 'before',
      start_line: 25,
      end_line: 25,
      body: 'Was this fine?',
    });
    expect(before.status).toBe(201);
    expect(before.body.comment.anchor.lines).toEqual(['line 25']);

    const sent = await json(t, 'POST', `${base}/reviews`, {});
    expect(sent.status).toBe(201);
    expect(sent.body.review.text).toContain('a.txt, line 3 (after the change)');
    expect(sent.body.review.text).toContain('line three');
    expect(sent.body.review.text).toContain('a.txt, line 25 (before the change');

    // The context between the net hunks: the after row's kept side is the file on disk.
    const content = await t.get(
      `${base}/workspace-run-changes/${encodeURIComponent(a.sides.after!.change_id)}/files/${a.sides.after!.file_id}/content?side=after`,
    );
    expect(content.body.content.text).toBe(fs.readFileSync(path.join(repo.dir, 'a.txt'), 'utf8'));
  });

  it('an added net file has no before side, a deleted one no after side', async () => {
    const { t, repo } = await setup({ 'gone.txt': 'bye\n' });
    await run(t, 'r1', () => {
      repo.write('new.txt', 'hello\n');
      repo.rm('gone.txt');
    });
    const files = await net(t);
    expect(files.get('new.txt')!.sides.before).toBeNull();
    expect(files.get('new.txt')!.sides.after).not.toBeNull();
    expect(files.get('gone.txt')!.sides.after).toBeNull();
    expect(files.get('gone.txt')!.sides.before).not.toBeNull();
  });
});
