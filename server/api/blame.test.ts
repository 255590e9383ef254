import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BlameOrigin, BlameResponse } from '../../shared/index.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';

/**
 * Which run wrote each line, through the REST route, from the kept contents of recorded runs and
 * tool calls (both storage engines: RUNDIFF_TEST_STORE=postgres runs this file on PostgreSQL).
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(files: Record<string, string>, limits = {}): Promise<{ t: TestServer; repo: TempRepo }> {
  const t = await startTestServer({ limits });
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  return { t, repo };
}

async function run(
  t: TestServer,
  runId: string,
  opts: {
    title?: string;
    prompt?: string;
    tools?: { id: string; name: string; edit: () => void }[];
    edit?: () => void;
  },
): Promise<void> {
  const started = await t.post({ type: 'run.started', session_id: 's1', run_id: runId, title: opts.title });
  expect(started.body.tracking).toBe(true);
  if (opts.prompt)
    await t.post({ type: 'message', session_id: 's1', role: 'user', content: opts.prompt, run_id: runId });
  for (const tool of opts.tools ?? []) {
    await t.post({ type: 'tool.started', session_id: 's1', run_id: runId, tool_call_id: tool.id, name: tool.name });
    tool.edit();
    expect(
      (await t.post({ type: 'tool.completed', session_id: 's1', run_id: runId, tool_call_id: tool.id })).status,
    ).toBe(200);
  }
  opts.edit?.();
  expect((await t.post({ type: 'run.completed', session_id: 's1', run_id: runId })).status).toBe(200);
}

async function blame(t: TestServer, file: string, at?: string): Promise<BlameResponse> {
  const q = `path=${encodeURIComponent(file)}${at === undefined ? '' : `&at=${encodeURIComponent(at)}`}`;
  const res = await t.get(`/api/hermes/sessions/s1/blame?${q}`);
  expect(res.status, res.text).toBe(200);
  return res.body.blame as BlameResponse;
}

/** Each line as `text <- what wrote it`, readable in a failure. */
const shown = (b: BlameResponse) =>
  b.lines.map((l) => {
    const o: BlameOrigin = b.origins[l.origin]!;
    const who = o.kind === 'tool_call' ? `${o.run_id}/${o.tool_call_id}` : o.kind === 'run' ? o.run_id : o.kind;
    return `${l.text} <- ${who}`;
  });

describe('GET /api/hermes/sessions/:id/blame', () => {
  it('names the run and tool call that last wrote each line, lines no run touched as before any run', async () => {
    const { t, repo } = await setup({ 'a.txt': 'one\ntwo\nthree\n' });
    const file = path.join(repo.dir, 'a.txt');
    await run(t, 'r1', {
      title: 'Fix two',
      prompt: 'please fix line two',
      tools: [{ id: 't1', name: 'Edit', edit: () => fs.writeFileSync(file, 'one\nTWO\nthree\n') }],
    });
    await run(t, 'r2', { edit: () => fs.writeFileSync(file, 'one\nTWO\nthree\nfour\n') });
    const b = await blame(t, 'a.txt');
    expect(shown(b)).toEqual(['one <- before_runs', 'TWO <- r1/t1', 'three <- before_runs', 'four <- r2']);
    const o = b.origins[b.lines[1]!.origin]!;
    expect(o).toMatchObject({ run_title: 'Fix two', prompt: 'please fix line two', tool_name: 'Edit', agent: 'run' });
    expect(o.at).toEqual(expect.any(Number));
    expect(b).toMatchObject({ exists: true, truncated: false, changes_walked: 3 });
  });

  it('attributes an edit made between two runs to outside rundiff, with its time window', async () => {
    const { t, repo } = await setup({ 'a.txt': 'one\ntwo\n' });
    const file = path.join(repo.dir, 'a.txt');
    await run(t, 'r1', { edit: () => fs.writeFileSync(file, 'one\ntwo\nby r1\n') });
    fs.writeFileSync(file, 'by hand\none\ntwo\nby r1\n'); // the user, between runs
    await run(t, 'r2', { edit: () => fs.writeFileSync(file, 'by hand\none\ntwo\nby r1\nby r2\n') });
    const b = await blame(t, 'a.txt');
    expect(shown(b)).toEqual([
      'by hand <- outside',
      'one <- before_runs',
      'two <- before_runs',
      'by r1 <- r1',
      'by r2 <- r2',
    ]);
    const outside = b.origins[b.lines[0]!.origin]!;
    const r1 = b.origins[b.lines[3]!.origin]!;
    expect(outside.from).toBe(r1.at);
    expect(outside.to).toBeGreaterThanOrEqual(outside.from!);
    expect(outside.run_id).toBe('r2');
  });

  it('blames the file at the end of an earlier change with at=', async () => {
    const { t, repo } = await setup({ 'a.txt': 'one\n' });
    const file = path.join(repo.dir, 'a.txt');
    await run(t, 'r1', { edit: () => fs.writeFileSync(file, 'one\nr1\n') });
    await run(t, 'r2', { edit: () => fs.writeFileSync(file, 'one\nr1\nr2\n') });
    const runs = (await t.get('/api/hermes/sessions/s1')).body.runs as { run_id: string; change_id: string }[];
    const r1 = runs.find((r) => r.run_id === 'r1')!;
    const b = await blame(t, 'a.txt', r1.change_id);
    expect(shown(b)).toEqual(['one <- before_runs', 'r1 <- r1']);
    expect(b.at_change_id).toBe(r1.change_id);
    expect(shown(await blame(t, 'a.txt', 'current'))).toHaveLength(3);
  });

  it('follows a file back through its rename', async () => {
    const { t, repo } = await setup({ 'old.txt': 'a\nb\nc\nd\ne\n' });
    await run(t, 'r1', { edit: () => fs.writeFileSync(path.join(repo.dir, 'old.txt'), 'a\nb\nc\nd\ne\nr1\n') });
    await run(t, 'r2', {
      edit: () => {
        fs.renameSync(path.join(repo.dir, 'old.txt'), path.join(repo.dir, 'new.txt'));
        fs.appendFileSync(path.join(repo.dir, 'new.txt'), 'r2\n');
      },
    });
    const b = await blame(t, 'new.txt');
    expect(shown(b).slice(4)).toEqual(['e <- before_runs', 'r1 <- r1', 'r2 <- r2']);
    expect(await blame(t, 'old.txt')).toMatchObject({ exists: false, lines: [] });
  });

  it('says truncated past the changes one blame walks, and answers 413 past its lines', async () => {
    const { t, repo } = await setup({ 'a.txt': 'zero\n' }, { blameMaxChanges: 2, blameMaxLines: 4 });
    const file = path.join(repo.dir, 'a.txt');
    await run(t, 'r1', { edit: () => fs.appendFileSync(file, 'r1\n') });
    await run(t, 'r2', { edit: () => fs.appendFileSync(file, 'r2\n') });
    await run(t, 'r3', { edit: () => fs.appendFileSync(file, 'r3\n') });
    const b = await blame(t, 'a.txt');
    expect(b).toMatchObject({ truncated: true, changes_walked: 2 });
    expect(shown(b)).toEqual(['zero <- truncated', 'r1 <- truncated', 'r2 <- r2', 'r3 <- r3']);
    await run(t, 'r4', { edit: () => fs.appendFileSync(file, 'r4\n') });
    const res = await t.get('/api/hermes/sessions/s1/blame?path=a.txt');
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });

  it('says contents not kept where a state on the way was not kept, and keeps what survived it', async () => {
    const { t, repo } = await setup({ 'a.txt': 'zero\n' }, { maxContentFileBytes: 40 });
    const file = path.join(repo.dir, 'a.txt');
    await run(t, 'r1', { edit: () => fs.appendFileSync(file, `${'x'.repeat(60)}\n`) });
    await run(t, 'r2', { edit: () => fs.writeFileSync(file, 'zero\nr2\n') });
    const b = await blame(t, 'a.txt');
    expect(shown(b)).toEqual(['zero <- before_runs', 'r2 <- not_kept']);
    expect(b.origins[b.lines[1]!.origin]!.run_id).toBe('r2');
  });

  it('exports the session as an Agent Trace record: ranges per run, outside edits unknown, old lines left out', async () => {
    const { t, repo } = await setup({ 'a.txt': 'one\ntwo\n', 'img.bin': 'x' });
    const file = path.join(repo.dir, 'a.txt');
    await run(t, 'r1', {
      title: 'Add three',
      edit: () => {
        fs.writeFileSync(file, 'one\ntwo\nthree\nfour\n');
        fs.writeFileSync(path.join(repo.dir, 'img.bin'), Buffer.from([0, 1, 2]));
        fs.writeFileSync(path.join(repo.dir, 'b.txt'), 'b\n');
      },
    });
    fs.writeFileSync(file, 'zero\none\ntwo\nthree\nfour\n');
    await run(t, 'r2', {
      edit: () => {
        fs.rmSync(path.join(repo.dir, 'b.txt'));
        fs.appendFileSync(file, 'five\n');
      },
    });
    const res = await t.get('/api/hermes/sessions/s1/agent-trace');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/vnd\.agent-trace\.record\+json/);
    const record = JSON.parse(res.text);
    expect(record).toMatchObject({ version: '0.1.0', tool: { name: 'rundiff' } });
    expect(record.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(record.timestamp).toISOString()).toBe(record.timestamp);
    // b.txt was deleted: it is not in the record; the binary file is named as omitted.
    expect(record.files.map((f: { path: string }) => f.path)).toEqual(['a.txt']);
    expect(record.files[0].conversations).toEqual([
      {
        contributor: { type: 'unknown' },
        ranges: [{ start_line: 1, end_line: 1 }],
        metadata: { 'dev.rundiff': expect.objectContaining({ kind: 'outside', run_id: 'r2' }) },
      },
      {
        contributor: { type: 'ai' },
        ranges: [{ start_line: 4, end_line: 5 }],
        metadata: { 'dev.rundiff': expect.objectContaining({ kind: 'run', run_id: 'r1', run_title: 'Add three' }) },
      },
      {
        contributor: { type: 'ai' },
        ranges: [{ start_line: 6, end_line: 6 }],
        metadata: { 'dev.rundiff': expect.objectContaining({ kind: 'run', run_id: 'r2' }) },
      },
    ]);
    expect(record.metadata['dev.rundiff'].omitted).toEqual([{ path: 'img.bin', reason: 'invalid_input' }]);
  });

  it('refuses bad input clearly', async () => {
    const { t } = await setup({ 'a.txt': 'x\n' });
    expect((await t.get('/api/hermes/sessions/s1/blame')).status).toBe(400);
    expect((await t.get('/api/hermes/sessions/s1/blame?path=a.txt')).body.error.code).toBe('not_found');
    expect((await t.get('/api/hermes/sessions/nope/blame?path=a.txt')).status).toBe(404);
    const bad = await t.get('/api/hermes/sessions/s1/blame?path=a.txt&at=zzzzzzzz');
    expect([bad.status, bad.body.error.code]).toEqual([400, 'invalid_input']);
  });
});
