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

/**
 * The reduced hunk `git apply -R` is given for a selection of its body lines (0 = the first after
 * the header): an unchosen `+` line becomes context, an unchosen `-` line is dropped.
 */
function reducedHunk(onePatch: string, selected: number[]): string {
  const at = onePatch.indexOf('\n@@') + 1;
  const [header, ...rest] = onePatch.slice(at).split('\n');
  const range = /^@@ -(\d+)(?:,\d+)? \+(\d+(?:,\d+)?) @@/.exec(header!)!;
  const body: string[] = [];
  let n = 0;
  for (const line of rest) {
    if (line === '' || line.startsWith('\\')) {
      if (line !== '') body.push(line);
      continue;
    }
    const chosen = selected.includes(n++);
    if (line[0] === ' ' || chosen) body.push(line);
    else if (line[0] === '+') body.push(` ${line.slice(1)}`);
  }
  const oldCount = body.filter((l) => l[0] === ' ' || l[0] === '-').length;
  return `${onePatch.slice(0, at)}@@ -${range[1]},${oldCount} +${range[2]} @@\n${body.join('\n')}\n`;
}

describe('undo some lines of one hunk of a past run', () => {
  const start = numbered(40);
  // The run rewrites lines 20-22 as four lines: one hunk of 3 context, 3 -, 4 +, 3 context lines.
  const runEnd = numbered(40).replace('line 20\nline 21\nline 22\n', 'TWENTY\nTWENTY-ONE\nNEW\nTWENTY-TWO\n');

  async function setupRewrite(): Promise<{ t: TestServer; repo: TempRepo; id: string; one: string; header: string }> {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const repo = createTempRepo({ files: { 'f.txt': start } });
    cleanups.push(() => repo.cleanup());
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    repo.write('f.txt', runEnd);
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    const { id, patch } = await filePatch(t);
    const { header, patch: one } = oneHunk(patch, 0);
    return { t, repo, id, one, header };
  }

  // Body: 0-2 context, 3 -line 20, 4 -line 21, 5 -line 22, 6 +TWENTY, 7 +TWENTY-ONE, 8 +NEW, 9 +TWENTY-TWO.
  const selections: [string, number[]][] = [
    ['one added line', [8]],
    ['one removed line', [4]],
    ['a removed line and its replacement', [3, 6]],
    ['every removed line and none added', [3, 4, 5]],
  ];
  const later: [string, (s: string) => string][] = [
    ['not edited since', (s) => s],
    ['edited above', (s) => s.replace('line 2\n', 'two, by the user\n')],
    ['edited below', (s) => s.replace('line 39\n', 'thirty-nine, by the user\n')],
  ];
  for (const [what, lines] of selections) {
    for (const [when, edit] of later) {
      it(`undoes ${what} as git apply -R of the reduced hunk does, the file ${when}`, async () => {
        const { t, repo, id, one, header } = await setupRewrite();
        repo.write('f.txt', edit(runEnd));
        const expected = gitApplyReverse(repo.read('f.txt'), reducedHunk(one, lines));
        expect(expected).not.toBeNull();
        // Control: the reduced result is neither the file as it is nor the whole hunk's undo.
        expect(expected!.equals(repo.read('f.txt'))).toBe(false);
        expect(expected!.equals(gitApplyReverse(repo.read('f.txt'), one)!)).toBe(false);

        const res = await undo(t, { hunks: [{ file_id: id, hunk: header, lines }] });
        expect(res.status).toBe(200);
        expect(res.body.files[0]).toMatchObject({ path: 'f.txt', applied: true });
        expect(repo.read('f.txt').toString()).toBe(expected!.toString());
        const detail = (await t.get('/api/hermes/sessions/s1')).body;
        const undoRun = detail.runs.find((r: { run_id: string }) => r.run_id === res.body.revert_run_id);
        expect(undoRun).toMatchObject({ source: 'revert', status: 'completed' });
      });
    }
  }

  it('a later edit of a line the selection undoes: git apply -R refuses, and so does the undo', async () => {
    const { t, repo, id, one, header } = await setupRewrite();
    repo.write('f.txt', runEnd.replace('NEW\n', 'new, by the user\n'));
    const now = repo.read('f.txt');
    expect(gitApplyReverse(now, reducedHunk(one, [8]))).toBeNull();
    const res = await undo(t, { hunks: [{ file_id: id, hunk: header, lines: [8] }] });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('revert_conflict');
    expect(repo.read('f.txt').equals(now)).toBe(true);
  });

  it('refuses a context line, an index past the hunk and malformed lines with 400, writing nothing', async () => {
    const { t, repo, id, header } = await setupRewrite();
    const bad = async (lines: unknown, message: string) => {
      const res = await undo(t, { hunks: [{ file_id: id, hunk: header, lines }] });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(message);
    };
    await bad([0], 'is a context line');
    await bad([13], 'is not in hunk');
    await bad([], 'lines must be a non-empty array');
    await bad([-1], 'lines must be a non-empty array');
    await bad(['3'], 'lines must be a non-empty array');
    expect(repo.read('f.txt').toString()).toBe(runEnd);
    // Control: the last + line is accepted.
    expect((await undo(t, { dry_run: true, hunks: [{ file_id: id, hunk: header, lines: [9] }] })).status).toBe(200);
  });
});
