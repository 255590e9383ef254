import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { createTempRepo } from '../test-support/temp-repo.ts';
import { rows, runChange, testEngine } from '../test-support/engine-harness.ts';

const engine = testEngine();
afterAll(() => engine.close());

describe('ignore semantics', () => {
  test('B14: git-ignored files are skipped, tracked-but-ignored files stay eligible, new folders list files one by one', async () => {
    const repo = createTempRepo({ files: { '.gitignore': '*.log\nbuild/\n', 'src/a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    repo.write('tracked.log', 'v1\n');
    repo.git('add', '-f', 'tracked.log');
    repo.commit('tracked log');
    repo.write('.git/info/exclude', 'secret-excluded.txt\n');
    const { start, delta } = await runChange(engine, repo.dir, () => {
      repo.write('debug.log', 'ignored\n');
      repo.write('build/out.js', 'ignored\n');
      repo.write('secret-excluded.txt', 'ignored\n');
      repo.write('tracked.log', 'v2\n');
      repo.write('newdir/deeper/one.txt', '1\n');
      repo.write('newdir/two.txt', '2\n');
    });
    expect(start.workspace_kind).toBe('git');
    expect(rows(delta)).toEqual(['A newdir/deeper/one.txt +1 -0', 'A newdir/two.txt +1 -0', 'M tracked.log +1 -1']);
  });

  test('B14: ignored folders are pruned before descending (their files are not scanned)', async () => {
    const repo = createTempRepo({ files: { '.gitignore': 'node_modules/\n', 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    for (let i = 0; i < 30; i++) repo.write(`node_modules/p/${i}.js`, 'x');
    const { start } = await runChange(engine, repo.dir, () => undefined);
    expect(start.scanned_files).toBe(2);
  });

  test('B15: non-git default folders, file classes, sidecars and the root .gitignore are skipped', async () => {
    const repo = createTempRepo({ git: false, files: { '.gitignore': 'secret/\n*.tmp\n', 'keep.txt': 'k\n' } });
    onTestFinished(() => repo.cleanup());
    const { start, delta } = await runChange(engine, repo.dir, () => {
      for (const d of [
        '.git',
        'node_modules',
        'dist',
        'build',
        'target',
        '.gradle',
        '.mvn',
        '.venv',
        'venv',
        '__pycache__',
        '.pytest_cache',
        '.cache',
        'coverage',
      ])
        repo.write(`${d}/x.txt`, 'x\n');
      for (const ext of [
        'pyc',
        'class',
        'o',
        'so',
        'dylib',
        'dll',
        'exe',
        'png',
        'jpg',
        'jpeg',
        'gif',
        'webp',
        'zip',
        'tar',
        'sqlite',
        'db',
        'PNG',
      ])
        repo.write(`file.${ext}`, 'x\n');
      repo.write('data.db-wal', 'x');
      repo.write('data.db-shm', 'x');
      repo.write('data.sqlite-journal', 'x');
      repo.write('secret/key.txt', 'x\n');
      repo.write('scratch.tmp', 'x\n');
      repo.write('src/new.txt', 'new\n');
    });
    expect(start.workspace_kind).toBe('filesystem');
    expect(rows(delta)).toEqual(['A src/new.txt +1 -0']);
  });

  test('B15: SQLite sidecars are skipped in a git workspace too, and the server database is never reported', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    const own = testEngine({}, { dbPath: path.join(repo.dir, 'state', 'rundiff.sqlite3') });
    try {
      const { delta } = await runChange(own, repo.dir, () => {
        repo.write('state/rundiff.sqlite3', 'db bytes');
        repo.write('app.db-wal', 'x');
        repo.write('b.txt', 'b\n');
      });
      expect(rows(delta)).toEqual(['A b.txt +1 -0']);
    } finally {
      await own.close();
    }
  });

  test('B16: a nested repository: changes inside are reported as files, its ignores apply, its .git is untouched', async () => {
    const repo = createTempRepo({ files: { 'outer.txt': 'o\n' } });
    onTestFinished(() => repo.cleanup());
    const inner = path.join(repo.dir, 'vendor/inner');
    fs.mkdirSync(inner, { recursive: true });
    repo.git('-C', inner, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(inner, '.gitignore'), 'gen/\n');
    fs.writeFileSync(path.join(inner, 'lib.txt'), 'lib\n');
    repo.git('-C', inner, 'add', '-A');
    repo.git('-C', inner, '-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '-m', 'inner');
    const snapshot = () => fs.readFileSync(path.join(inner, '.git/index'));
    const indexBefore = snapshot();
    const { delta } = await runChange(engine, repo.dir, () => {
      fs.writeFileSync(path.join(inner, 'lib.txt'), 'lib\nmore\n');
      fs.mkdirSync(path.join(inner, 'gen'));
      fs.writeFileSync(path.join(inner, 'gen/out.txt'), 'generated\n');
      fs.writeFileSync(path.join(inner, 'added.txt'), 'new\n');
    });
    expect(rows(delta)).toEqual(['A vendor/inner/added.txt +1 -0', 'M vendor/inner/lib.txt +1 -0']);
    expect(snapshot()).toEqual(indexBefore);
  });

  test("B14: ignore rules that change during a run are git's at completion, although the walk starts from the checkpoint's", async () => {
    const repo = createTempRepo({ files: { '.gitignore': 'out/\n*.log\n', 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    repo.write('out/old.txt', 'pruned at the checkpoint\n');
    repo.write('keep.log', 'skipped at the checkpoint\n');
    const { delta } = await runChange(engine, repo.dir, () => {
      repo.write('.gitignore', 'gen/\n'); // out/ and *.log no longer ignored, gen/ now is
      repo.write('gen/made.txt', 'ignored now\n');
      repo.write('new.log', 'not ignored now\n');
    });
    // keep.log was there, ignored, with these bytes at the checkpoint: un-ignoring it changes no
    // byte. out/ was ignored whole (git did not look inside), and out/old.txt was written within the
    // racy margin of the checkpoint, so nothing vouches that it was there then: it is new to the record.
    expect(rows(delta)).toEqual(['M .gitignore +1 -2', 'A new.log +1 -0', 'A out/old.txt +1 -0']);
  });

  test('B14: a folder ignored since the last run is pruned at the next checkpoint (the remembered listing is only a guess)', async () => {
    const repo = createTempRepo({ files: { '.gitignore': 'dist/\n', 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    await runChange(engine, repo.dir, () => repo.write('a.txt', 'first run\n'));
    for (let i = 0; i < 5; i++) repo.write(`dist/${i}.js`, 'built\n');
    repo.write('b.txt', 'b\n');
    const { start, delta } = await runChange(engine, repo.dir, () => {
      repo.write('dist/0.js', 'rebuilt\n');
      repo.write('b.txt', 'b2\n');
    });
    expect(start.scanned_files).toBe(3);
    expect(rows(delta)).toEqual(['M b.txt +1 -1']);
  });
});
