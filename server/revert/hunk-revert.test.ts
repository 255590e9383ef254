import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempDir, createTempRepo, type TempRepo } from '../test-support/index.ts';

/**
 * Undoing one hunk of a past run over REST, held against `git apply -R` of that same hunk: on a
 * file later edited above, below or inside the hunk, the result is git's (inside: a conflict on
 * both sides, and nothing written); the undo is a run of its own.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const numbered = (n: number, edit: Record<number, string> = {}) =>
  Array.from({ length: n }, (_, i) => `${edit[i + 1] ?? `line ${i + 1}`}\n`).join('');

async function setup(): Promise<{ t: TestServer; repo: TempRepo }> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'f.txt': numbered(40), 'other.txt': 'other\n' } });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
  repo.write('f.txt', numbered(40, { 5: 'FIVE by the run', 30: 'THIRTY by the run' }));
  repo.write('other.txt', 'OTHER\n');
  await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
  return { t, repo };
}

const base = '/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1';

async function filePatch(t: TestServer): Promise<{ id: string; patch: string }> {
  const files = (await t.get(`${base}/files`)).body.files as { id: string; path: string }[];
  const id = files.find((f) => f.path === 'f.txt')!.id;
  return { id, patch: (await t.get(`${base}/files/${id}`)).body.file.patch };
}

/** The file's patch with only its hunk number `n` (0-based): what `git apply -R` is given. */
function oneHunk(patch: string, n: number): { header: string; patch: string } {
  const at = patch.indexOf('\n@@') + 1;
  const head = patch.slice(0, at);
  const hunks = patch.slice(at).split(/(?=^@@ )/m);
  const hunk = hunks[n]!;
  return { header: /^@@ [^@]+ @@/.exec(hunk)![0], patch: head + hunk };
}

/** `git apply -R` of `patch` on a copy of `content`: the result, or null when git refuses. */
function gitApplyReverse(content: Buffer, patch: string): Buffer | null {
  const repo = createTempRepo({ files: { 'f.txt': content } });
  cleanups.push(() => repo.cleanup());
  const file = path.join(createTempDir('rundiff-hunk-'), 'one.patch');
  cleanups.push(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));
  fs.writeFileSync(file, patch);
  try {
    repo.git('apply', '-R', file);
  } catch {
    return null;
  }
  return repo.read('f.txt');
}

const undo = (t: TestServer, body: object) =>
  t.request('POST', `${base}/revert`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('undo one hunk of a past run', () => {
  const cases: [string, Record<number, string>][] = [
    ['not edited since', {}],
    ['edited above the hunk', { 1: 'one, by the user' }],
    ['edited below the hunk', { 40: 'forty, by the user' }],
    ['edited in the other hunk', { 5: 'five, by the user' }],
  ];
  for (const [label, later] of cases) {
    it(`undoes the hunk as git apply -R does, the file ${label}`, async () => {
      const { t, repo } = await setup();
      const { id, patch } = await filePatch(t);
      const second = oneHunk(patch, 1);
      repo.write('f.txt', numbered(40, { 5: 'FIVE by the run', 30: 'THIRTY by the run', ...later }));
      const expected = gitApplyReverse(repo.read('f.txt'), second.patch);
      expect(expected).not.toBeNull();

      const dry = await undo(t, { dry_run: true, hunks: [{ file_id: id, hunk: second.header }] });
      expect(dry.status).toBe(200);
      expect(dry.body.files).toHaveLength(1);
      expect(dry.body.files[0].patch).toContain('-THIRTY by the run\n+line 30\n');
      expect(dry.body.files[0].patch).not.toContain('FIVE');

      const res = await undo(t, { hunks: [{ file_id: id, hunk: second.header }] });
      expect(res.status).toBe(200);
      expect(res.body.files[0]).toMatchObject({ path: 'f.txt', applied: true });
      expect(repo.read('f.txt').equals(expected!)).toBe(true);
      // The other file of the run keeps the run's edit; the undo is its own run.
      expect(repo.read('other.txt').toString()).toBe('OTHER\n');
      const detail = (await t.get('/api/hermes/sessions/s1')).body;
      const undoRun = detail.runs.find((r: { run_id: string }) => r.run_id === res.body.revert_run_id);
      expect(undoRun).toMatchObject({ source: 'revert', status: 'completed' });
      const said = detail.messages.find((m: { run_id: string }) => m.run_id === res.body.revert_run_id);
      expect(said.content).toBe('Undo 1 hunk of f.txt in run:r1');
    });
  }

  it('undoes the hunk as git apply -R does when lines were added above it since (the hunk moved down)', async () => {
    const { t, repo } = await setup();
    const { id, patch } = await filePatch(t);
    const second = oneHunk(patch, 1);
    repo.write(
      'f.txt',
      'added 1\nadded 2\nadded 3\n' + numbered(40, { 5: 'FIVE by the run', 30: 'THIRTY by the run' }),
    );
    const expected = gitApplyReverse(repo.read('f.txt'), second.patch);
    expect(expected).not.toBeNull();
    const res = await undo(t, { hunks: [{ file_id: id, hunk: second.header }] });
    expect(res.status).toBe(200);
    expect(res.body.files[0]).toMatchObject({ action: 'merge', applied: true });
    expect(repo.read('f.txt').equals(expected!)).toBe(true);
  });

  it('a later edit inside the hunk: git apply -R refuses, and so does the undo, writing nothing', async () => {
    const { t, repo } = await setup();
    const { id, patch } = await filePatch(t);
    const second = oneHunk(patch, 1);
    repo.write('f.txt', numbered(40, { 5: 'FIVE by the run', 30: 'thirty, rewritten by the user' }));
    const now = repo.read('f.txt');
    expect(gitApplyReverse(now, second.patch)).toBeNull();
    const res = await undo(t, { hunks: [{ file_id: id, hunk: second.header }] });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('revert_conflict');
    expect(res.body.error.details.files[0].conflict).toContain('thirty, rewritten by the user');
    expect(repo.read('f.txt').equals(now)).toBe(true);
  });

  it('both hunks undone give the start; an unknown hunk is 404, an added file 400, file_ids with hunks 400', async () => {
    const { t, repo } = await setup();
    const { id, patch } = await filePatch(t);
    const headers = [oneHunk(patch, 0).header, oneHunk(patch, 1).header];
    const res = await undo(t, { hunks: headers.map((hunk) => ({ file_id: id, hunk })) });
    expect(res.status).toBe(200);
    expect(repo.read('f.txt').toString()).toBe(numbered(40));

    const missing = await undo(t, { hunks: [{ file_id: id, hunk: '@@ -100,3 +100,3 @@' }] });
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toContain('no hunk @@ -100,3 +100,3 @@ in the patch of f.txt');
    expect((await undo(t, { hunks: [{ file_id: id, hunk: 'not a header' }] })).status).toBe(400);
    expect((await undo(t, { file_ids: [id], hunks: [{ file_id: id, hunk: headers[0] }] })).status).toBe(400);

    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r2' });
    repo.write('new.txt', 'a\nb\n');
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r2' });
    const added = (await t.get('/api/hermes/sessions/s1/workspace-run-changes/run%3Ar2/files')).body.files[0];
    const r = await t.request('POST', '/api/hermes/sessions/s1/workspace-run-changes/run%3Ar2/revert', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hunks: [{ file_id: added.id, hunk: '@@ -0,0 +1,2 @@' }] }),
    });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('the run added or deleted the file');
  });
});
