import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import {
  createTempDir,
  createTempRepo,
  gitFingerprint,
  plantHostileConfig,
  startFolderFlip,
  type TempRepo,
} from '../test-support/index.ts';
import { executeSql } from '../test-support/store-engines.ts';

/**
 * Undoing a run over REST, in real workspaces: every kind of change comes back, later edits are
 * merged or refused (never overwritten), a dry run writes nothing, a revert is a run of its own
 * that can itself be reverted, and nothing is written outside the workspace.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  files: Record<string, string | Buffer>,
  opts: { git?: boolean; limits?: Record<string, number> } = {},
): Promise<{ t: TestServer; repo: TempRepo }> {
  const t = await startTestServer({ limits: opts.limits ?? {} });
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files, git: opts.git ?? false });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  return { t, repo };
}

async function run(t: TestServer, runId: string, edit: () => void): Promise<void> {
  expect((await t.post({ type: 'run.started', session_id: 's1', run_id: runId })).body.tracking).toBe(true);
  edit();
  expect((await t.post({ type: 'run.completed', session_id: 's1', run_id: runId })).status).toBe(200);
}

const revertUrl = (changeId: string) =>
  `/api/hermes/sessions/s1/workspace-run-changes/${encodeURIComponent(changeId)}/revert`;

function revert(t: TestServer, changeId: string, body: object = {}) {
  return t.request('POST', revertUrl(changeId), {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Every file below `dir` but `.git`: its bytes (a link: its target) and mode. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      if (rel === '' && name === '.git') continue;
      const r = rel === '' ? name : `${rel}/${name}`;
      const st = fs.lstatSync(path.join(dir, r));
      if (st.isDirectory()) walk(r);
      else if (st.isSymbolicLink()) out[r] = `link -> ${fs.readlinkSync(path.join(dir, r))}`;
      else out[r] = `${(st.mode & 0o111) !== 0 ? 'x' : '-'} ${fs.readFileSync(path.join(dir, r)).toString('base64')}`;
    }
  };
  walk('');
  return out;
}

const BINARY_START = Buffer.from([0, 1, 2, 3, 0, 255]);
const START: Record<string, string | Buffer> = {
  'edit.txt': 'one\ntwo\nthree\n',
  'gone.txt': 'deleted by the run\n',
  'old-name.txt': 'moved by the run\nline 2\nline 3\n',
  'image.bin': BINARY_START,
  'script.sh': '#!/bin/sh\necho hi\n',
};

function theRun(repo: TempRepo): void {
  repo.write('edit.txt', 'one\nTWO\nthree\n');
  repo.rm('gone.txt');
  fs.renameSync(path.join(repo.dir, 'old-name.txt'), path.join(repo.dir, 'new-name.txt'));
  repo.write('added/deep/new.txt', 'made by the run\n');
  repo.write('image.bin', Buffer.from([0, 9, 9, 9, 0, 255, 7]));
  fs.chmodSync(path.join(repo.dir, 'script.sh'), 0o755);
}

describe('POST .../workspace-run-changes/:changeId/revert', () => {
  for (const git of [false, true]) {
    it(`reverts a modify, add, delete, rename, binary and mode change (${git ? 'git' : 'folder'} workspace)`, async () => {
      const { t, repo } = await setup(START, { git });
      const before = tree(repo.dir);
      await run(t, 'r1', () => theRun(repo));
      const after = tree(repo.dir);
      expect(after).not.toEqual(before);

      const res = await revert(t, 'run:r1');
      expect(res.status).toBe(200);
      const byPath = Object.fromEntries(res.body.files.map((f: { path: string }) => [f.path, f]));
      expect(Object.keys(byPath).sort()).toEqual([
        'added/deep/new.txt',
        'edit.txt',
        'gone.txt',
        'image.bin',
        'new-name.txt',
        'script.sh',
      ]);
      // The binary file too: the checkpoint keeps binary start bytes like text (outside git as well).
      for (const f of res.body.files)
        expect([f.path, f.reason, f.action, f.applied]).toEqual([f.path, null, 'restore', true]);
      expect(res.body).toMatchObject({ applied_count: 6, conflict_count: 0 });
      // The run created folders for its new file; they stay (empty), as git would leave them.
      expect(tree(repo.dir)).toEqual(before);

      // The revert is a run of its own in the session, with its own change.
      const detail = (await t.get('/api/hermes/sessions/s1')).body;
      const revertRun = detail.runs.find((r: { run_id: string }) => r.run_id === res.body.revert_run_id);
      expect(revertRun).toMatchObject({ source: 'revert', status: 'completed', tracking: true });
      const change = detail.changes.find((c: { change_id: string }) => c.change_id === res.body.revert_change_id);
      expect(change).toMatchObject({ source: 'revert', changed_count: 6 });
    });
  }

  it('a dry run answers the plan and the patches and changes nothing on disk', async () => {
    const { t, repo } = await setup(START, { git: true });
    await run(t, 'r1', () => theRun(repo));
    const after = tree(repo.dir);
    const res = await revert(t, 'run:r1', { dry_run: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dry_run: true, applied_count: 6, revert_run_id: null });
    expect(tree(repo.dir)).toEqual(after);
    const edit = res.body.files.find((f: { path: string }) => f.path === 'edit.txt');
    expect(edit).toMatchObject({ action: 'restore', applied: false });
    expect(edit.patch).toContain('diff --git a/edit.txt b/edit.txt');
    expect(edit.patch).toContain('-TWO\n+two\n');
    const moved = res.body.files.find((f: { path: string }) => f.path === 'new-name.txt');
    expect(moved.patch).toContain('rename from new-name.txt\nrename to old-name.txt');
    const mode = res.body.files.find((f: { path: string }) => f.path === 'script.sh');
    expect(mode.patch).toContain('old mode 100755\nnew mode 100644');
    // Nothing recorded: no revert run.
    expect((await t.get('/api/hermes/sessions/s1')).body.runs).toHaveLength(1);
  });

  it('a file edited again after the run: a clean merge keeps the later edit and undoes the run', async () => {
    const lines = (xs: string[]) => xs.map((x) => `${x}\n`).join('');
    const { t, repo } = await setup({ 'f.txt': lines(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) });
    await run(t, 'r1', () => repo.write('f.txt', lines(['a', 'B by the run', 'c', 'd', 'e', 'f', 'g', 'h'])));
    repo.write('f.txt', lines(['a', 'B by the run', 'c', 'd', 'e', 'f', 'g', 'H by the user']));
    const dry = await revert(t, 'run:r1', { dry_run: true });
    expect(dry.body.files[0]).toMatchObject({ action: 'merge' });
    const res = await revert(t, 'run:r1');
    expect(res.status).toBe(200);
    expect(res.body.files[0]).toMatchObject({ action: 'merge', applied: true });
    expect(repo.read('f.txt').toString()).toBe(lines(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'H by the user']));
  });

  it('a file edited again on the same lines conflicts: it is left alone, the conflict is shown, the answer is 409', async () => {
    const { t, repo } = await setup({ 'f.txt': 'one\ntwo\nthree\n' });
    await run(t, 'r1', () => repo.write('f.txt', 'one\nTWO\nthree\n'));
    repo.write('f.txt', 'one\nTwo, said the user\nthree\n');
    const res = await revert(t, 'run:r1');
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('revert_conflict');
    const [f] = res.body.error.details.files;
    expect(f).toMatchObject({ path: 'f.txt', action: 'conflict', applied: false });
    expect(f.conflict).toContain('one\n<<<<<<< now\nTwo, said the user\n=======\ntwo\n');
    expect(f.conflict).toContain('>>>>>>> before the run (the undo)');
    expect(repo.read('f.txt').toString()).toBe('one\nTwo, said the user\nthree\n');
    expect((await t.get('/api/hermes/sessions/s1')).body.runs).toHaveLength(1);
  });

  it('by default a revert is all or nothing: one conflicting file and nothing is written, each file named with why', async () => {
    const { t, repo } = await setup({ 'f.txt': 'one\n', 'g.txt': 'gee\n', 'h.txt': 'aitch\n' });
    await run(t, 'r1', () => {
      repo.write('f.txt', 'ONE\n');
      repo.write('g.txt', 'GEE\n');
      repo.write('h.txt', 'AITCH\n');
    });
    repo.write('g.txt', 'the user wrote this\n');
    const before = tree(repo.dir);
    const res = await revert(t, 'run:r1');
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('revert_conflict');
    expect(res.body.error.message).toContain('1 of 3 files cannot be reverted (g.txt: conflict)');
    expect(res.body.error.hint).toContain('partial: true');
    expect(
      res.body.error.details.files.map((f: { path: string; action: string; applied: boolean }) => [
        f.path,
        f.action,
        f.applied,
      ]),
    ).toEqual([
      ['f.txt', 'restore', false],
      ['g.txt', 'conflict', false],
      ['h.txt', 'restore', false],
    ]);
    // Byte for byte as it was, and no revert run recorded.
    expect(tree(repo.dir)).toEqual(before);
    expect((await t.get('/api/hermes/sessions/s1')).body.runs).toHaveLength(1);
  });

  it('a file whose contents were not kept blocks an all-or-nothing revert too', async () => {
    const { t, repo } = await setup(
      { 'big.txt': 'small\n', 'g.txt': 'gee\n' },
      { limits: { maxContentFileBytes: 64 } },
    );
    await run(t, 'r1', () => {
      repo.write('big.txt', 'x'.repeat(65));
      repo.write('g.txt', 'GEE\n');
    });
    const res = await revert(t, 'run:r1');
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('content_unavailable');
    expect(repo.read('g.txt').toString()).toBe('GEE\n');
    const partial = await revert(t, 'run:r1', { partial: true });
    expect(partial.status).toBe(200);
    expect(repo.read('g.txt').toString()).toBe('gee\n');
  });

  it('with partial: true, a conflict and a clean file: the clean one is applied and each outcome reported', async () => {
    const { t, repo } = await setup({ 'f.txt': 'one\n', 'g.txt': 'gee\n' });
    await run(t, 'r1', () => {
      repo.write('f.txt', 'ONE\n');
      repo.write('g.txt', 'GEE\n');
    });
    repo.write('f.txt', 'the user wrote this\n');
    const res = await revert(t, 'run:r1', { partial: true });
    expect(res.status).toBe(200);
    expect(
      res.body.files.map((f: { path: string; action: string; applied: boolean }) => [f.path, f.action, f.applied]),
    ).toEqual([
      ['f.txt', 'conflict', false],
      ['g.txt', 'restore', true],
    ]);
    expect(repo.read('f.txt').toString()).toBe('the user wrote this\n');
    expect(repo.read('g.txt').toString()).toBe('gee\n');
  });

  it('a file over the content bound cannot be reverted and says why', async () => {
    const { t, repo } = await setup({ 'big.txt': 'small\n' }, { limits: { maxContentFileBytes: 64 } });
    await run(t, 'r1', () => repo.write('big.txt', 'x'.repeat(65)));
    const dry = await revert(t, 'run:r1', { dry_run: true });
    expect(dry.body.files[0]).toMatchObject({ action: 'unavailable' });
    expect(dry.body.files[0].reason).toMatch(/^too_large/);
    const res = await revert(t, 'run:r1');
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('content_unavailable');
    expect(repo.read('big.txt').toString()).toBe('x'.repeat(65));
  });

  it('a change stored before contents were kept (an upgraded database) says not_recorded and writes nothing', async () => {
    const { t, repo } = await setup({ 'a.txt': 'a\n' });
    await run(t, 'r1', () => repo.write('a.txt', 'A\n'));
    await executeSql(t.server.store, 'DELETE FROM change_file_contents');
    const res = await revert(t, 'run:r1', { dry_run: true });
    expect(res.body.files[0]).toMatchObject({ action: 'unavailable', patch: null });
    expect(res.body.files[0].reason).toMatch(/^not_recorded/);
    expect((await revert(t, 'run:r1')).body.error.code).toBe('content_unavailable');
    expect(repo.read('a.txt').toString()).toBe('A\n');
  });

  it('a revert of a revert brings the run back', async () => {
    const { t, repo } = await setup(START, { git: true });
    await run(t, 'r1', () => theRun(repo));
    const afterRun = tree(repo.dir);
    const first = await revert(t, 'run:r1');
    expect(first.status).toBe(200);
    const second = await revert(t, first.body.revert_change_id);
    expect(second.status).toBe(200);
    // Everything comes back, the binary file too (its bytes as the revert found them were kept).
    expect(second.body.applied_count).toBe(6);
    expect(tree(repo.dir)).toEqual(afterRun);
  });

  it("only the files asked for, and a tool call's change alike", async () => {
    const { t, repo } = await setup({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    await t.post({ type: 'tool.started', session_id: 's1', run_id: 'r1', tool_call_id: 'tc1', name: 'edit' });
    repo.write('a.txt', 'A\n');
    repo.write('b.txt', 'B\n');
    await t.post({ type: 'tool.completed', session_id: 's1', run_id: 'r1', tool_call_id: 'tc1' });
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    const change = (await t.get('/api/hermes/sessions/s1/workspace-run-changes/tool%3Atc1')).body.change;
    const b = change.files.find((f: { path: string }) => f.path === 'b.txt');
    const res = await revert(t, 'tool:tc1', { file_ids: [b.id] });
    expect(res.status).toBe(200);
    expect(res.body.files.map((f: { path: string }) => f.path)).toEqual(['b.txt']);
    expect(repo.read('a.txt').toString()).toBe('A\n');
    expect(repo.read('b.txt').toString()).toBe('b\n');
    const unknown = await revert(t, 'tool:tc1', { file_ids: ['nope'] });
    expect(unknown.status).toBe(404);
    const bad = await revert(t, 'tool:tc1', { file_ids: 'x' });
    expect(bad.status).toBe(400);
  });

  it('a revert through a folder swapped for a symlink pointing outside is refused; without the link it restores', async () => {
    const { t, repo } = await setup({ 'sub/f.txt': 'start\n' });
    await run(t, 'r1', () => repo.write('sub/f.txt', 'end\n'));
    const outside = createTempDir('rundiff-outside-');
    cleanups.push(() => fs.rmSync(outside, { recursive: true, force: true }));
    fs.writeFileSync(path.join(outside, 'f.txt'), 'end\n');
    fs.renameSync(path.join(repo.dir, 'sub'), path.join(repo.dir, 'sub-real'));
    fs.symlinkSync(outside, path.join(repo.dir, 'sub'));

    const res = await revert(t, 'run:r1');
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('content_unavailable');
    expect(res.body.error.details.files[0]).toMatchObject({ action: 'refused', applied: false });
    expect(fs.readFileSync(path.join(outside, 'f.txt'), 'utf8')).toBe('end\n');

    // Positive control: the same revert with the real folder back in place writes the file.
    fs.rmSync(path.join(repo.dir, 'sub'));
    fs.renameSync(path.join(repo.dir, 'sub-real'), path.join(repo.dir, 'sub'));
    const ok = await revert(t, 'run:r1');
    expect(ok.status).toBe(200);
    expect(repo.read('sub/f.txt').toString()).toBe('start\n');
    expect(fs.readFileSync(path.join(outside, 'f.txt'), 'utf8')).toBe('end\n');
  });

  it('refuses while a run is open on the workspace (a dry run still answers); after it closes the revert goes through', async () => {
    const { t, repo } = await setup({ 'a.txt': 'a\n' });
    await run(t, 'r1', () => repo.write('a.txt', 'A\n'));
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r2' });
    const busy = await revert(t, 'run:r1');
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('workspace_busy');
    expect((await revert(t, 'run:r1', { dry_run: true })).status).toBe(200);
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r2' });
    expect((await revert(t, 'run:r1')).status).toBe(200);
    expect(repo.read('a.txt').toString()).toBe('a\n');
  });

  it('a merge runs no planted merge driver or config of the workspace (positive control: git merge runs it)', async () => {
    const lines = (xs: string[]) => xs.map((x) => `${x}\n`).join('');
    const { t, repo } = await setup({ 'f.txt': lines(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) }, { git: true });
    const planted = plantHostileConfig(repo);
    const marker = path.join(path.dirname(repo.dir), `${path.basename(repo.dir)}-merge-marker`);
    cleanups.push(() => fs.rmSync(marker, { force: true }));
    cleanups.push(() => fs.rmSync(planted.marker, { force: true }));
    const driver = path.join(repo.dir, '.git', 'merge-driver.sh');
    fs.writeFileSync(driver, `#!/bin/sh\necho merged >> '${marker}'\nexit 0\n`, { mode: 0o755 });
    repo.git('config', 'merge.evil.driver', `${driver} %O %A %B`);
    repo.git('config', 'merge.conflictStyle', 'diff3');
    fs.appendFileSync(path.join(repo.dir, '.git', 'info', 'attributes'), '* merge=evil\n');

    await run(t, 'r1', () => repo.write('f.txt', lines(['a', 'B', 'c', 'd', 'e', 'f', 'g', 'h'])));
    repo.write('f.txt', lines(['a', 'B', 'c', 'd', 'e', 'f', 'g', 'H']));
    const fingerprint = gitFingerprint(path.join(repo.dir, '.git'));
    const res = await revert(t, 'run:r1');
    expect(res.body.files[0]).toMatchObject({ action: 'merge', applied: true });
    expect(repo.read('f.txt').toString()).toBe(lines(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'H']));
    expect(fs.existsSync(marker)).toBe(false);
    expect(planted.markerExists()).toBe(false);
    expect(gitFingerprint(path.join(repo.dir, '.git'))).toBe(fingerprint);

    // Positive control: git's own merge of two branches that both changed f.txt runs the driver.
    const plain = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'filter.evil.required=false'];
    const off = [...plain, '-c', 'filter.evil.clean=', '-c', 'filter.evil.smudge=', '-c', 'filter.evil.process='];
    repo.git(...off, 'add', '-A');
    repo.git(...off, 'commit', '-qm', 'base');
    repo.git(...off, 'checkout', '-qb', 'other');
    repo.write('f.txt', lines(['x', 'B', 'c', 'd', 'e', 'f', 'g', 'H']));
    repo.git(...off, 'commit', '-qam', 'other');
    repo.git(...off, 'checkout', '-q', 'main');
    repo.write('f.txt', lines(['y', 'B', 'c', 'd', 'e', 'f', 'g', 'H']));
    repo.git(...off, 'commit', '-qam', 'main');
    try {
      repo.git(...off, 'merge', '-q', 'other', '-m', 'merge');
    } catch {
      /* the driver's result does not matter; that it ran does */
    }
    expect(fs.existsSync(marker)).toBe(true);
  });

  it('when the merge cannot run (no git), a file edited since is a conflict that says why, and is left alone', async () => {
    const lines = (xs: string[]) => xs.map((x) => `${x}\n`).join('');
    const { t, repo } = await setup({ 'f.txt': lines(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) });
    await run(t, 'r1', () => repo.write('f.txt', lines(['a', 'B', 'c', 'd', 'e', 'f', 'g', 'h'])));
    repo.write('f.txt', lines(['a', 'B', 'c', 'd', 'e', 'f', 'g', 'H']));
    const savedPath = process.env.PATH;
    const empty = createTempDir('rundiff-no-git-');
    cleanups.push(() => fs.rmSync(empty, { recursive: true, force: true }));
    process.env.PATH = empty;
    let res;
    try {
      res = await revert(t, 'run:r1', { dry_run: true });
    } finally {
      process.env.PATH = savedPath;
    }
    expect(res.body.files[0]).toMatchObject({ action: 'conflict' });
    expect(res.body.files[0].reason).toContain('the merge could not run');
    // Control: with git back, the same file merges.
    expect((await revert(t, 'run:r1', { dry_run: true })).body.files[0]).toMatchObject({ action: 'merge' });
  });

  it('a folder above the workspace flipped to a symlink while reverts run: nothing outside changes, never a 500', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const base = createTempDir('rundiff-flip-');
    cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
    const ws = path.join(base, 'p', 'ws');
    fs.mkdirSync(ws, { recursive: true });
    fs.writeFileSync(path.join(ws, 'marker.txt'), 'inside\n');
    fs.writeFileSync(path.join(ws, 'f.txt'), 'start\n');
    // The outside folder looks like the workspace after the run: a revert led there would write.
    const outside = path.join(base, 'outside');
    fs.mkdirSync(path.join(outside, 'ws'), { recursive: true });
    fs.writeFileSync(path.join(outside, 'ws', 'marker.txt'), 'outside\n');
    fs.writeFileSync(path.join(outside, 'ws', 'f.txt'), 'end\n');
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: ws });
    await run(t, 'r1', () => fs.writeFileSync(path.join(ws, 'f.txt'), 'end\n'));
    // The real workspace, held open, to put the run's end back between reverts wherever it is.
    const wsFd = fs.openSync(ws, 'r');
    cleanups.push(() => fs.closeSync(wsFd));
    const outsideBefore = tree(outside);

    const flip = startFolderFlip(base, { name: 'p', target: outside, ms: 4000 });
    let flipping = true;
    void flip.finally(() => (flipping = false)).catch(() => {});
    const statuses: Record<number, number> = {};
    while (flipping) {
      fs.writeFileSync(`/proc/self/fd/${wsFd}/f.txt`, 'end\n');
      const res = await revert(t, 'run:r1');
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
    const flips = await flip;

    expect(tree(outside)).toEqual(outsideBefore);
    expect(Object.keys(statuses).filter((s) => ![200, 404, 409].includes(Number(s)))).toEqual([]);
    expect(flips).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(ws, 'marker.txt'), 'utf8')).toBe('inside\n');
    // How many got through or saw the other folder depends on the machine's load; the positive
    // controls below do not: held flipped, the path leads outside and a revert writes nothing
    // there; held real, the same revert writes the workspace.
    fs.renameSync(path.join(base, 'p'), path.join(base, 'p.real'));
    fs.symlinkSync(outside, path.join(base, 'p'));
    expect(fs.readFileSync(path.join(ws, 'marker.txt'), 'utf8')).toBe('outside\n');
    expect([404, 409]).toContain((await revert(t, 'run:r1')).status);
    expect(tree(outside)).toEqual(outsideBefore);
    fs.unlinkSync(path.join(base, 'p'));
    fs.renameSync(path.join(base, 'p.real'), path.join(base, 'p'));
    fs.writeFileSync(path.join(ws, 'f.txt'), 'end\n');
    const real = await revert(t, 'run:r1');
    expect(real.status).toBe(200);
    expect(real.body.applied_count).toBe(1);
    expect(fs.readFileSync(path.join(ws, 'f.txt'), 'utf8')).toBe('start\n');
  });

  it("the revert run's own checkpoint and delta are of the folder it writes: a folder above flipped at its start writes nothing, at its end stores no change", async () => {
    const base = createTempDir('rundiff-flip-start-');
    cleanups.push(() => fs.rmSync(base, { recursive: true, force: true }));
    const ws = path.join(base, 'p', 'ws');
    const outside = path.join(base, 'outside');
    // Flips the folder above the workspace to a symlink (and holds it) at one chosen moment of a
    // revert run: right after its checkpoint is taken (before its start is answered), or as its
    // close begins (after the writes, before its delta is computed).
    let flipAt: 'start' | 'end' | null = null;
    const flip = (at: 'start' | 'end', runId: string) => {
      if (flipAt !== at || !runId.startsWith('revert-')) return;
      flipAt = null;
      fs.renameSync(path.join(base, 'p'), path.join(base, 'p.real'));
      fs.symlinkSync(outside, path.join(base, 'p'));
    };
    const t = await startTestServer({
      observers: () => [
        { checkpointTaken: ({ runId }) => flip('start', runId), closing: ({ runId }) => flip('end', runId) },
      ],
    });
    cleanups.push(() => t.close());
    fs.mkdirSync(ws, { recursive: true });
    fs.writeFileSync(path.join(ws, 'f.txt'), 'start\n');
    // The outside folder looks like the workspace after the run, with one more file.
    fs.mkdirSync(path.join(outside, 'ws'), { recursive: true });
    fs.writeFileSync(path.join(outside, 'ws', 'f.txt'), 'end\n');
    fs.writeFileSync(path.join(outside, 'ws', 'other.txt'), 'outside\n');
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: ws });
    await run(t, 'r1', () => fs.writeFileSync(path.join(ws, 'f.txt'), 'end\n'));
    const outsideBefore = tree(outside);

    // Control, not flipped: the revert writes and its run records exactly what it wrote.
    const control = await revert(t, 'run:r1');
    expect(control.status).toBe(200);
    expect(fs.readFileSync(path.join(ws, 'f.txt'), 'utf8')).toBe('start\n');
    const written = (await t.get(`/api/hermes/sessions/s1/workspace-run-changes/${control.body.revert_change_id}`)).body
      .change;
    expect(written.files.map((f: { path: string; change_type: string }) => `${f.change_type} ${f.path}`)).toEqual([
      'modified f.txt',
    ]);

    fs.writeFileSync(path.join(ws, 'f.txt'), 'end\n');
    flipAt = 'start';
    const res = await revert(t, 'run:r1');
    expect(flipAt).toBeNull(); // the flip happened, at that moment
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('moved while the revert started');
    expect(fs.readFileSync(path.join(base, 'p.real', 'ws', 'f.txt'), 'utf8')).toBe('end\n');
    expect(tree(outside)).toEqual(outsideBefore);
    // The revert run is recorded, failed, with no change of the other folder.
    const failed = await t.get(
      `/api/hermes/sessions/s1/workspace-run-changes/run%3A${res.body.error.details.revert_run_id}`,
    );
    expect(failed.status).toBe(404);

    // Flipped after the writes: the file is reverted through the descriptor, but the delta, taken by
    // name, would be of the outside copy (its other.txt "added"): no change is stored for it.
    fs.unlinkSync(path.join(base, 'p'));
    fs.renameSync(path.join(base, 'p.real'), path.join(base, 'p'));
    flipAt = 'end';
    const late = await revert(t, 'run:r1');
    expect(flipAt).toBeNull();
    expect(late.status).toBe(200);
    expect(late.body.applied_count).toBe(1);
    expect(late.body.revert_change_id).toBeNull();
    expect(fs.readFileSync(path.join(base, 'p.real', 'ws', 'f.txt'), 'utf8')).toBe('start\n');
    expect(tree(outside)).toEqual(outsideBefore);
    const unstored = await t.get(`/api/hermes/sessions/s1/workspace-run-changes/run%3A${late.body.revert_run_id}`);
    expect(unstored.status).toBe(404);
  });

  it('a revert keeps a private file private: 0600 stays 0600, and a mode the run changed is undone on its bits', async () => {
    const { t, repo } = await setup({ 'secret.txt': 'key=1\n', 'tool.sh': '#!/bin/sh\n', 'old.txt': 'moved\n' });
    fs.chmodSync(path.join(repo.dir, 'secret.txt'), 0o600);
    fs.chmodSync(path.join(repo.dir, 'tool.sh'), 0o600);
    fs.chmodSync(path.join(repo.dir, 'old.txt'), 0o640);
    await run(t, 'r1', () => {
      repo.write('secret.txt', 'key=2\n');
      fs.chmodSync(path.join(repo.dir, 'tool.sh'), 0o700);
      fs.renameSync(path.join(repo.dir, 'old.txt'), path.join(repo.dir, 'new.txt'));
    });
    const perm = (p: string) => fs.statSync(path.join(repo.dir, p)).mode & 0o777;
    expect([perm('secret.txt'), perm('tool.sh'), perm('new.txt')]).toEqual([0o600, 0o700, 0o640]);

    const res = await revert(t, 'run:r1');
    expect(res.status).toBe(200);
    expect(res.body.applied_count).toBe(3);
    expect(repo.read('secret.txt').toString()).toBe('key=1\n');
    // Kept: the bits of the file replaced (or moved back); only the executable bit follows the run's start.
    expect([perm('secret.txt'), perm('tool.sh'), perm('old.txt')]).toEqual([0o600, 0o600, 0o640]);
    expect(fs.statSync(path.join(repo.dir, 'secret.txt')).uid).toBe(process.getuid!());
  });

  it('a revert whose every write is refused answers 409 content_unavailable, not 200 with an empty revert run', async () => {
    const { t, repo } = await setup({ 'sub/gone.txt': 'x\n' });
    await run(t, 'r1', () => repo.rm('sub/gone.txt'));
    const outside = createTempDir('rundiff-outside-');
    cleanups.push(() => fs.rmSync(outside, { recursive: true, force: true }));
    // An absent file reads as absent through the link too: only the write sees the link and refuses.
    fs.renameSync(path.join(repo.dir, 'sub'), path.join(repo.dir, 'sub-real'));
    fs.symlinkSync(outside, path.join(repo.dir, 'sub'));

    const res = await revert(t, 'run:r1');
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('content_unavailable');
    expect(res.body.error.details.files[0]).toMatchObject({ action: 'refused', applied: false });
    expect(fs.readdirSync(outside)).toEqual([]);
    // The run recorded for it says it wrote nothing.
    const detail = (await t.get('/api/hermes/sessions/s1')).body;
    const revertRun = detail.runs.find((r: { run_id: string }) => r.run_id === res.body.error.details.revert_run_id);
    expect(revertRun).toMatchObject({ source: 'revert', status: 'failed' });

    // Positive control: with the real folder back the same revert writes the file.
    fs.rmSync(path.join(repo.dir, 'sub'));
    fs.renameSync(path.join(repo.dir, 'sub-real'), path.join(repo.dir, 'sub'));
    const ok = await revert(t, 'run:r1');
    expect(ok.status).toBe(200);
    expect(repo.read('sub/gone.txt').toString()).toBe('x\n');
  });

  it('an all-or-nothing revert whose write fails midway puts back the files it wrote; partial keeps them', async () => {
    const { t, repo } = await setup({ 'a.txt': 'first\n', 'b.txt': 'bee\n', 'sub/gone.txt': 'x\n' });
    await run(t, 'r1', () => {
      repo.rm('a.txt');
      repo.write('b.txt', 'BEE\n');
      repo.rm('sub/gone.txt');
    });
    const outside = createTempDir('rundiff-outside-');
    cleanups.push(() => fs.rmSync(outside, { recursive: true, force: true }));
    // Planned as clean (an absent file reads as absent through the link); only its write refuses,
    // after a.txt and b.txt were written.
    fs.renameSync(path.join(repo.dir, 'sub'), path.join(repo.dir, 'sub-real'));
    fs.symlinkSync(outside, path.join(repo.dir, 'sub'));
    const before = tree(repo.dir);

    const res = await revert(t, 'run:r1');
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('content_unavailable');
    expect(res.body.error.message).toContain('sub/gone.txt could not be reverted');
    const files = res.body.error.details.files as { path: string; action: string; applied: boolean; reason: string }[];
    expect(files.map((f) => [f.path, f.action, f.applied])).toEqual([
      ['a.txt', 'restore', false],
      ['b.txt', 'restore', false],
      ['sub/gone.txt', 'refused', false],
    ]);
    expect(files[0]!.reason).toBe('put back: sub/gone.txt could not be reverted');
    expect(tree(repo.dir)).toEqual(before);
    expect(fs.readdirSync(outside)).toEqual([]);
    const detail = (await t.get('/api/hermes/sessions/s1')).body;
    const revertRun = detail.runs.find((r: { run_id: string }) => r.run_id === res.body.error.details.revert_run_id);
    expect(revertRun).toMatchObject({ source: 'revert', status: 'failed' });

    // Positive control: the same revert with partial keeps the files that could be written.
    const partial = await revert(t, 'run:r1', { partial: true });
    expect(partial.status).toBe(200);
    expect(repo.read('a.txt').toString()).toBe('first\n');
    expect(repo.read('b.txt').toString()).toBe('bee\n');
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('applies only the plan it previewed: a file changed since the dry run refuses with the new plan', async () => {
    const g = (first: string, last: string) => `${first}\n2\n3\n4\n5\n6\n${last}\n`;
    const { t, repo } = await setup({ 'f.txt': 'one\n', 'g.txt': g('gee', 'end') });
    await run(t, 'r1', () => {
      repo.write('f.txt', 'ONE\n');
      repo.write('g.txt', g('GEE', 'end'));
    });
    const dry = await revert(t, 'run:r1', { dry_run: true });
    expect(dry.body.plan_id).toMatch(/^[0-9a-f]{64}$/);
    // The same tree plans the same: the id is the plan's, not the call's.
    expect((await revert(t, 'run:r1', { dry_run: true })).body.plan_id).toBe(dry.body.plan_id);

    repo.write('g.txt', g('GEE', 'end, by the user'));
    const before = tree(repo.dir);
    const stale = await revert(t, 'run:r1', { plan_id: dry.body.plan_id });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('revert_plan_changed');
    expect(stale.body.error.details.plan_id).not.toBe(dry.body.plan_id);
    expect(stale.body.error.details.files.find((f: { path: string }) => f.path === 'g.txt').action).toBe('merge');
    expect(tree(repo.dir)).toEqual(before);
    expect((await t.get('/api/hermes/sessions/s1')).body.runs).toHaveLength(1);

    const ok = await revert(t, 'run:r1', { plan_id: stale.body.error.details.plan_id });
    expect(ok.status).toBe(200);
    expect(ok.body.plan_id).toBe(stale.body.error.details.plan_id);
    expect(repo.read('f.txt').toString()).toBe('one\n');
    expect((await revert(t, 'run:r1', { plan_id: 'nope' })).status).toBe(400);
  });

  it('unknown session or change is 404, a bad body 400', async () => {
    const { t } = await setup({ 'a.txt': 'a\n' });
    expect((await revert(t, 'run:nope')).status).toBe(404);
    expect((await revert(t, 'run:nope', { dry_run: 'yes' })).status).toBe(400);
    expect((await revert(t, 'run:nope', { other: 1 })).status).toBe(400);
  });
});
