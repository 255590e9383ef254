import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Limits } from '../../shared/index.ts';
import { RACY_MARGIN_MS } from '../checkpoint/model.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempDir, createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';

/**
 * The five record cases against git: a submodule a clone did not check out, a deleted .gitignore,
 * a text file that is not UTF-8, a line longer than the per-file patch bound, and a change of line
 * endings only. Each run is recorded over REST and held against git's own answer on the same
 * repository: `git diff` of the work tree (its bytes), and `git apply` of the whole-run patch on a
 * copy of the start tree, which must give the end tree.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(limits: Partial<Limits> = {}): Promise<TestServer> {
  const t = await startTestServer({ limits });
  cleanups.push(() => t.close());
  return t;
}

function repo(files: Record<string, string | Buffer>): TempRepo {
  const r = createTempRepo({ files });
  cleanups.push(() => r.cleanup());
  return r;
}

const GIT_ENV = { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

/** git's own answer, as bytes. */
function git(dir: string, ...args: string[]): Buffer {
  return execFileSync('git', args, { cwd: dir, env: GIT_ENV });
}

/** The tree's files (not .git) with their bytes. */
function tree(dir: string): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (p === '.git' || p.endsWith('/.git')) continue;
      if (e.isDirectory()) walk(p);
      else out[p] = fs.readFileSync(path.join(dir, p));
    }
  };
  walk('');
  return out;
}

/** A write this long before a checkpoint: well within the 2 s racy margin, past the clock's slack. */
const JUST_BEFORE_MS = 300;
if (JUST_BEFORE_MS >= RACY_MARGIN_MS) throw new Error('JUST_BEFORE_MS must lie within the racy margin');

let runs = 0;
/** One run over `dir`: its stored rows, the start tree and the run's id. */
async function recordRun(t: TestServer, dir: string, change: () => void) {
  const run = `r${++runs}`;
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: dir });
  expect((await t.post({ type: 'run.started', session_id: 's1', run_id: run })).status).toBe(200);
  const start = tree(dir);
  change();
  const done = await t.post({ type: 'run.completed', session_id: 's1', run_id: run });
  expect(done.status).toBe(200);
  const base = `/api/hermes/sessions/s1/workspace-run-changes/run%3A${run}`;
  const change_ = (await t.get(base)).body.change as { truncated: boolean; truncated_reasons: string[] };
  const files = (await t.get(`${base}/files`)).body.files as {
    id: string;
    path: string;
    change_type: string;
    additions: number;
    deletions: number;
    truncated: boolean;
  }[];
  return { start, base, change: change_, files };
}

/** `git apply` of `patch` on a fresh copy of `start`: the resulting tree. */
function applied(start: Record<string, Buffer>, patch: Buffer): Record<string, Buffer> {
  const dir = createTempDir('rundiff-apply-');
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  git(dir, 'init', '-q');
  for (const [p, bytes] of Object.entries(start)) {
    fs.mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    fs.writeFileSync(path.join(dir, p), bytes);
  }
  const file = `${dir}.patch`;
  fs.writeFileSync(file, patch);
  cleanups.push(() => fs.rmSync(file, { force: true }));
  git(dir, 'apply', '--allow-empty', '--whitespace=nowarn', file);
  return tree(dir);
}

/** git's numstat of the work tree against HEAD (untracked files added first, as intent to add). */
function numstat(dir: string): string[] {
  git(dir, 'add', '-N', '.');
  return git(dir, 'diff', '--numstat', 'HEAD').toString('utf8').trim().split('\n').filter(Boolean);
}

const rowsOf = (files: { path: string; additions: number; deletions: number }[]) =>
  files.map((f) => `${f.additions}\t${f.deletions}\t${f.path}`);

describe('the five record cases, against git', () => {
  it('a submodule a clone did not check out: not degraded, and the rows are git diff --numstat', async () => {
    const t = await server();
    const sub = repo({ 'lib.txt': 'lib\n' });
    const upstream = repo({ 'a.txt': 'a\n' });
    upstream.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub.dir, 'libs/sub');
    upstream.commit('add the submodule');
    const parent = createTempDir('rundiff-clone-');
    cleanups.push(() => fs.rmSync(parent, { recursive: true, force: true }));
    const dir = path.join(parent, 'clone');
    upstream.git('clone', '-q', upstream.dir, dir);
    expect(fs.readdirSync(path.join(dir, 'libs/sub'))).toEqual([]);
    const run = await recordRun(t, dir, () => fs.writeFileSync(path.join(dir, 'a.txt'), 'a changed\n'));
    expect(run.change).toMatchObject({ truncated: false, truncated_reasons: [] });
    expect(rowsOf(run.files)).toEqual(numstat(dir));
    expect(applied(run.start, (await t.get(`${run.base}/patch`)).raw)).toEqual(tree(dir));
  });

  it('a deleted .gitignore: the files it ignored existed unchanged at both ends, so the patch applies', async () => {
    const t = await server();
    const r = repo({ '.gitignore': 'secret.env\n*.log\n', 'a.txt': 'a\n' });
    r.write('secret.env', 'TOKEN=1\n');
    r.write('app.log', 'started\n');
    const run = await recordRun(t, r.dir, () => r.rm('.gitignore'));
    expect(run.files.map((f) => `${f.change_type} ${f.path}`)).toEqual(['deleted .gitignore']);
    // git's own diff of what it tracked: the one deleted file (the ignored files were never in it).
    expect(git(r.dir, 'diff', '--numstat', 'HEAD').toString().trim()).toBe('0\t2\t.gitignore');
    // Before the fix git apply refused: "secret.env: already exists in working directory".
    expect(applied(run.start, (await t.get(`${run.base}/patch`)).raw)).toEqual(tree(r.dir));
  });

  it('a deleted .gitignore un-ignores a whole folder written just before the run: its files are not changes', async () => {
    const t = await server();
    const r = repo({ '.gitignore': 'build/\n', 'a.txt': 'a\n' });
    r.write('build/js/app.js', 'bundle\n');
    r.write('build/out.txt', 'out\n');
    // Just before the checkpoint: past the clock's slack, well within the 2 s racy margin.
    await new Promise((res) => setTimeout(res, JUST_BEFORE_MS));
    const run = await recordRun(t, r.dir, () => r.rm('.gitignore'));
    expect(run.files.map((f) => `${f.change_type} ${f.path}`)).toEqual(['deleted .gitignore']);
    expect(git(r.dir, 'diff', '--numstat', 'HEAD').toString().trim()).toBe('0\t1\t.gitignore');
    expect(applied(run.start, (await t.get(`${run.base}/patch`)).raw)).toEqual(tree(r.dir));
    // Control: a file the run writes in that folder is a change.
    r.write('.gitignore', 'build/\n');
    const written = await recordRun(t, r.dir, () => {
      r.rm('.gitignore');
      r.write('build/new.txt', 'new\n');
    });
    expect(written.files.map((f) => `${f.change_type} ${f.path}`).sort()).toEqual([
      'added build/new.txt',
      'deleted .gitignore',
    ]);
  });

  it('outside git, a deleted or added root .gitignore: files unchanged at both ends are not changes', async () => {
    const t = await server();
    const dir = createTempDir('rundiff-plain-');
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.writeFileSync(path.join(dir, '.gitignore'), 'secret.env\n*.log\n');
    fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
    fs.writeFileSync(path.join(dir, 'secret.env'), 'TOKEN=1\n');
    fs.writeFileSync(path.join(dir, 'app.log'), 'started\n');
    // Written just before the checkpoint: past the clock's slack, well within the 2 s racy margin.
    await new Promise((r) => setTimeout(r, JUST_BEFORE_MS));
    const deleted = await recordRun(t, dir, () => fs.rmSync(path.join(dir, '.gitignore')));
    expect(deleted.files.map((f) => `${f.change_type} ${f.path}`)).toEqual(['deleted .gitignore']);
    expect(applied(deleted.start, (await t.get(`${deleted.base}/patch`)).raw)).toEqual(tree(dir));
    const added = await recordRun(t, dir, () => fs.writeFileSync(path.join(dir, '.gitignore'), 'secret.env\n'));
    expect(added.files.map((f) => `${f.change_type} ${f.path}`)).toEqual(['added .gitignore']);
    // Control: a file the run did write is a change, ignored at the start or not.
    const written = await recordRun(t, dir, () => {
      fs.rmSync(path.join(dir, '.gitignore'));
      fs.writeFileSync(path.join(dir, 'secret.env'), 'TOKEN=2\n');
    });
    expect(written.files.map((f) => `${f.change_type} ${f.path}`).sort()).toEqual([
      'added secret.env',
      'deleted .gitignore',
    ]);
  });

  it("a text file that is not UTF-8: its patch is git's bytes, read with replacement characters", async () => {
    const t = await server();
    const latin1 = (s: string) => Buffer.from(s, 'latin1');
    const r = repo({ 'menu.txt': latin1('caf\xe9\nth\xe9\nsoup\n') });
    const run = await recordRun(t, r.dir, () => r.write('menu.txt', latin1('caf\xe9 cr\xe8me\nth\xe9\nsoup\n')));
    expect(rowsOf(run.files)).toEqual(numstat(r.dir));
    const opened = (await t.get(`${run.base}/files/${run.files[0]!.id}`)).body;
    const gitPatch = git(r.dir, 'diff', '--no-color', 'HEAD', '--', 'menu.txt');
    expect(Buffer.from(opened.patch_base64, 'base64').equals(gitPatch)).toBe(true);
    expect(opened.file).toMatchObject({ truncated: false, omitted_reason: null });
    expect(opened.file.patch).toBe(gitPatch.toString('utf8'));
    expect(opened.file.patch).toContain('-caf\uFFFD\n+caf\uFFFD cr\uFFFDme\n');
    expect(applied(run.start, (await t.get(`${run.base}/patch`)).raw)).toEqual(tree(r.dir));
  });

  it("a line longer than the per-file bound: the stored patch is git's, cut at a line boundary", async () => {
    const t = await server({ maxFilePatchBytes: 400 });
    const r = repo({ 'min.js': 'var a=1;\n' + 'x'.repeat(2_000) + '\n' });
    const run = await recordRun(t, r.dir, () => r.write('min.js', 'var a=2;\n' + 'y'.repeat(2_000) + '\n'));
    expect(rowsOf(run.files)).toEqual(numstat(r.dir));
    const gitPatch = git(r.dir, 'diff', '--no-color', 'HEAD', '--', 'min.js').toString('utf8');
    const stored = (await t.get(`${run.base}/files/${run.files[0]!.id}`)).body;
    // The row's stored patch fell short, so it opens whole from the kept contents: git's patch.
    expect(stored.file.patch).toBe(gitPatch);
    expect(run.files[0]).toMatchObject({ truncated: true });
    const row = (await t.get(`${run.base}/files`)).body.files[0] as { patch_bytes: number };
    // Stored inline: git's patch up to the end of the last line that fits, never part of the long line.
    expect(row.patch_bytes).toBe(Buffer.byteLength(gitPatch.slice(0, gitPatch.indexOf('\n-xxxx') + 1)));
    expect(applied(run.start, (await t.get(`${run.base}/patch`)).raw)).toEqual(tree(r.dir));
  });

  it("a change of line endings only: git's patch, every line removed and added again", async () => {
    const t = await server();
    const text = Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join('');
    const r = repo({ 'unix.txt': text });
    const run = await recordRun(t, r.dir, () => r.write('unix.txt', text.replace(/\n/g, '\r\n')));
    expect(rowsOf(run.files)).toEqual(numstat(r.dir));
    const opened = (await t.get(`${run.base}/files/${run.files[0]!.id}`)).body;
    expect(opened.file.patch).toBe(git(r.dir, 'diff', '--no-color', 'HEAD', '--', 'unix.txt').toString('utf8'));
    expect(applied(run.start, (await t.get(`${run.base}/patch`)).raw)).toEqual(tree(r.dir));
  });
});
