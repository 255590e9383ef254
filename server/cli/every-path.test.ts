import fs from 'node:fs';
import path from 'node:path';
import { runRundiff } from '../test-support/cli-process.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { FIRST_FILES_PAGE, type FileSummary } from '../../shared/index.ts';
import { connectClient, startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo } from '../test-support/index.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const rundiff = (args: string[], cwd: string) => runRundiff(args, cwd);

const name = (i: number) => `src/f${String(i).padStart(3, '0')}.txt`;

/** A repository of `n` files, each holding "old"; the command rewrites every one in place like a codemod. */
async function sedOver(t: TestServer, n: number, session: string) {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[name(i)] = `line ${i}\nold\n`;
  const repo = createTempRepo({ files });
  cleanups.push(() => repo.cleanup());
  const res = await rundiff(
    ['run', '--server', t.server.url, '--session', session, '--', 'sh', '-c', 'sed -i s/old/new/ src/*.txt'],
    repo.dir,
  );
  expect(res.code).toBe(0);
  return { repo, res, expected: Object.keys(files).sort() };
}

const changeRoute = (session: string) => `/api/hermes/sessions/${session}/workspace-run-changes/run%3A`;

describe('every changed path is stored and listed', () => {
  it('a 300-file sed over a repository lists all 300 paths in the CLI summary, REST pages and the whole-run patch', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const { res, expected } = await sedOver(t, 300, 'sed-300');

    const lines = res.stderr.trim().split('\n');
    expect(lines).toContain('Changed 300 files');
    const rows = lines.filter((l) => l.startsWith('M '));
    expect(rows).toEqual(expected.map((p) => `M ${p} +1 -1`));
    expect(res.stderr).not.toMatch(/more files?/);

    // The session detail carries the first page and says how to go on.
    const detail = await t.get('/api/hermes/sessions/sed-300');
    const change = detail.body.changes[0];
    expect(change.changed_count).toBe(300);
    expect(change.omitted_count).toBe(0);
    expect(change.truncated_reasons).toEqual([]);
    expect(change.files_total).toBe(300);
    expect(change.files.map((f: FileSummary) => f.path)).toEqual(expected.slice(0, FIRST_FILES_PAGE));
    expect(change.next_file_cursor).toEqual(expect.any(String));

    // The change summary answers the same first page.
    const base = `${changeRoute('sed-300')}${encodeURIComponent(change.run_id)}`;
    const summary = await t.get(base);
    expect(summary.body.change.files).toEqual(change.files);
    expect(summary.body.change.next_file_cursor).toBe(change.next_file_cursor);

    // Paging from the start: each row exactly once, in path order; a cursor read twice gives the same page.
    const seen: FileSummary[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor === null ? '?limit=64' : `?after=${cursor}&limit=64`;
      const page = await t.get(`${base}/files${q}`);
      expect(page.status).toBe(200);
      expect(page.body.files_total).toBe(300);
      if (cursor !== null) expect((await t.get(`${base}/files${q}`)).body).toEqual(page.body);
      seen.push(...page.body.files);
      cursor = page.body.next_file_cursor;
      pages++;
    } while (cursor !== null && pages < 20);
    expect(pages).toBe(5);
    expect(seen.map((f) => f.path)).toEqual(expected);
    expect(new Set(seen.map((f) => f.id)).size).toBe(300);
    // The first page's cursor continues exactly where the detail's page ends.
    const second = await t.get(`${base}/files?after=${change.next_file_cursor}`);
    expect(second.body.files.map((f: FileSummary) => f.path)).toEqual(expected.slice(FIRST_FILES_PAGE, 250));
    // Any position is a cursor: a client may jump straight to the rows it shows.
    const jump = await t.get(`${base}/files?after=249&limit=3`);
    expect(jump.body.files.map((f: FileSummary) => f.path)).toEqual(expected.slice(250, 253));

    const patch = await t.get(`${base}/patch`);
    const stanzas = patch.text.split('\n').filter((l) => l.startsWith('diff --git '));
    expect(stanzas).toEqual(expected.map((p) => `diff --git a/${p} b/${p}`));
  });

  it('the completion answer and workspace.diff.completed of a 300-file change carry the first page and the cursor', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[name(i)] = 'old\n';
    const repo = createTempRepo({ files });
    cleanups.push(() => repo.cleanup());
    const client = await connectClient(t.server.url);
    cleanups.push(() => client.close());
    await client.ask('session.subscribe', { session_id: 'ev-300' });
    const s = { session_id: 'ev-300', run_id: 'r1' };
    expect((await t.post({ type: 'run.started', ...s, workspace: repo.dir })).status).toBe(200);
    for (const f of Object.keys(files)) fs.writeFileSync(path.join(repo.dir, f), 'new\n');
    const done = await t.post({ type: 'run.completed', ...s });
    expect(done.body).toMatchObject({ changed_count: 300, omitted_count: 0, files_total: 300 });
    expect(done.body.files).toHaveLength(FIRST_FILES_PAGE);
    expect(done.body.next_file_cursor).toEqual(expect.any(String));
    const [ev] = await client.waitFor('workspace.diff.completed');
    const payload = ev!.payload as { files: unknown[]; files_total: number; next_file_cursor: string };
    expect(payload.files).toHaveLength(FIRST_FILES_PAGE);
    expect(payload.files_total).toBe(300);
    expect(payload.next_file_cursor).toBe(done.body.next_file_cursor);
  });

  it('a tool call that changes 120 files pages through the same files route: first page, cursor, every path once', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[name(i)] = 'old\n';
    const repo = createTempRepo({ files });
    cleanups.push(() => repo.cleanup());
    const s = { session_id: 'tool-120', run_id: 'r1' };
    await t.post({ type: 'run.started', ...s, workspace: repo.dir });
    await t.post({ type: 'tool.started', ...s, tool_call_id: 'tc1', name: 'codemod' });
    for (const f of Object.keys(files)) fs.writeFileSync(path.join(repo.dir, f), 'new\n');
    const done = await t.post({ type: 'tool.completed', ...s, tool_call_id: 'tc1' });
    expect(done.body).toMatchObject({ change_id: 'tool:tc1', changed_count: 120, files_total: 120 });
    expect(done.body.files).toHaveLength(FIRST_FILES_PAGE);

    const change = (await t.get('/api/hermes/sessions/tool-120')).body.changes.find(
      (c: { source: string }) => c.source === 'tool',
    );
    expect(change).toMatchObject({ change_id: 'tool:tc1', tool_call_id: 'tc1', files_total: 120 });
    expect(change.next_file_cursor).toBe(done.body.next_file_cursor);
    const base = '/api/hermes/sessions/tool-120/workspace-run-changes/tool%3Atc1';
    const rest = await t.get(`${base}/files?after=${change.next_file_cursor}`);
    expect(rest.body).toMatchObject({ files_total: 120, next_file_cursor: null });
    const paths = [...change.files, ...rest.body.files].map((f: FileSummary) => f.path);
    expect(paths).toEqual(Object.keys(files).sort());
    // The last row's patch is there to open, as for the first page's rows.
    const last = rest.body.files[rest.body.files.length - 1] as FileSummary;
    expect((await t.get(`${base}/files/${last.id}`)).body.file.patch).toContain('+new');
  });

  it('with no server reachable the summary still lists every path, read back from the database', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[name(i)] = 'old\n';
    const repo = createTempRepo({ files });
    cleanups.push(() => repo.cleanup());
    const db = path.join(repo.dir, '..', `${path.basename(repo.dir)}-offline.db`);
    cleanups.push(() => fs.rmSync(db, { force: true }));
    const res = await rundiff(
      ['run', '--server', 'http://127.0.0.1:9', '--db', db, '--', 'sh', '-c', 'sed -i s/old/new/ src/*.txt'],
      repo.dir,
    );
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('Changed 120 files');
    expect(res.stderr.split('\n').filter((l) => l.startsWith('M '))).toEqual(
      Object.keys(files)
        .sort()
        .map((p) => `M ${p} +1 -1`),
    );
  });

  it('the files route refuses a bad cursor (past the last row, negative, too large) or limit and clamps a limit above the maximum', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    await sedOver(t, 3, 'sed-3');
    const runId = (await t.get('/api/hermes/sessions/sed-3')).body.changes[0].run_id;
    const base = `${changeRoute('sed-3')}${encodeURIComponent(runId)}`;
    expect((await t.get(`${base}/files?after=x`)).status).toBe(400);
    expect((await t.get(`${base}/files?limit=0`)).status).toBe(400);
    // The valid range is -1 < after < files_total; each refusal says what is wrong with the value.
    const refusal = async (q: string) => {
      const r = await t.get(`${base}/files?${q}`);
      return {
        status: r.status,
        code: r.body.error?.code,
        field: r.body.error?.details?.field,
        message: r.body.error?.message,
      };
    };
    expect(await refusal('after=3')).toEqual({
      status: 400,
      code: 'invalid_input',
      field: 'after',
      message: 'after must be below files_total (3): the change has rows 0 to 2',
    });
    expect((await refusal('after=300')).status).toBe(400);
    expect(await refusal('after=-1')).toMatchObject({
      status: 400,
      field: 'after',
      message: 'after must be at least 0',
    });
    expect(await refusal('after=9007199254740993')).toMatchObject({
      status: 400,
      field: 'after',
      message: 'after must be at most 9007199254740991',
    });
    expect(await refusal('after=1.5')).toMatchObject({ status: 400, message: 'after must be a whole number' });
    // The last row is a valid position: an empty last page.
    const last = await t.get(`${base}/files?after=2`);
    expect(last.status).toBe(200);
    expect(last.body).toMatchObject({ files: [], files_total: 3, next_file_cursor: null });
    const all = await t.get(`${base}/files?limit=100000`);
    expect(all.body.files).toHaveLength(3);
    expect(all.body.next_file_cursor).toBeNull();
    expect((await t.get(`${changeRoute('sed-3')}nope/files`)).status).toBe(404);
  });

  it('past a tiny row bound the rest are counted (rows, omitted_count) and the CLI names the bound', async () => {
    const t = await startTestServer({ limits: { maxChangedFiles: 4 } });
    cleanups.push(() => t.close());
    const { res, expected } = await sedOver(t, 10, 'sed-bound');
    expect(res.stderr).toContain('Changed 10 files');
    expect(res.stderr.split('\n').filter((l) => l.startsWith('M '))).toEqual(
      expected.slice(0, 4).map((p) => `M ${p} +1 -1`),
    );
    expect(res.stderr).toContain(
      '+6 more files not stored: the change passed the bound of stored rows (RUNDIFF_MAX_CHANGED_FILES)',
    );
    const change = (await t.get('/api/hermes/sessions/sed-bound')).body.changes[0];
    expect(change).toMatchObject({ truncated: true, omitted_count: 6 });
    expect(change.files).toHaveLength(4);
    expect(change).not.toHaveProperty('next_file_cursor');
    expect(change.truncated_reasons).toContain('rows');
    const patch = await t.get(`${changeRoute('sed-bound')}${encodeURIComponent(change.run_id)}/patch`);
    expect(patch.text.split('\n').filter((l) => l.startsWith('diff --git ') || l.startsWith('# '))).toEqual([
      ...expected.slice(0, 4).map((p) => `diff --git a/${p} b/${p}`),
      '# rundiff: 6 more changed paths not stored (rows)',
    ]);
  });
});
