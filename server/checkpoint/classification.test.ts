import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';
import { rows, runChange, testEngine } from '../test-support/engine-harness.ts';

const engine = testEngine();
afterAll(() => engine.close());

const lines = (n: number, tag = 'line'): string => Array.from({ length: n }, (_, i) => `${tag} ${i}\n`).join('');

describe('classification', () => {
  test('B7: a 0-byte file added and a 0-byte file deleted', async () => {
    const repo = createTempRepo({ files: { 'empty-old': '', 'keep.txt': 'k\n' } });
    onTestFinished(() => repo.cleanup());
    const { delta } = await runChange(engine, repo.dir, () => {
      repo.rm('empty-old');
      repo.write('dir/empty-new', '');
      repo.write('keep.txt', 'k\nx\n');
    });
    // Identical (empty) contents pair as a rename, as git diff -M does.
    expect(rows(delta)).toEqual(['R empty-old -> dir/empty-new +0 -0', 'M keep.txt +1 -0']);
  });

  test('B7: a new empty file is added +0 -0, a deleted empty file deleted +0 -0 (no pairing partner)', async () => {
    const repo = createTempRepo({ files: { e1: '', 'k.txt': 'k\n' } });
    onTestFinished(() => repo.cleanup());
    const first = await runChange(engine, repo.dir, () => repo.write('new-empty', ''));
    expect(rows(first.delta)).toEqual(['A new-empty +0 -0']);
    const second = await runChange(engine, repo.dir, () => repo.rm('e1'));
    expect(rows(second.delta)).toEqual(['D e1 +0 -0']);
  });

  test('B8: a binary moved without a byte changed is a rename without changes (binary as git counts it, header-only patch as git prints it)', async () => {
    const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(76, 0)]);
    const repo = createTempRepo({ files: { 'pic.gif': gif } });
    onTestFinished(() => repo.cleanup());
    const { delta } = await runChange(engine, repo.dir, () =>
      fs.renameSync(path.join(repo.dir, 'pic.gif'), path.join(repo.dir, 'moved.gif')),
    );
    expect(rows(delta)).toEqual(['R pic.gif -> moved.gif +0 -0 binary']);
    expect(delta.files[0]!.patch).toBe(
      'diff --git a/pic.gif b/moved.gif\nsimilarity index 100%\nrename from pic.gif\nrename to moved.gif\n',
    );
  });

  test('B8: exact rename, rename with edits, and a pair below 50% similarity', async () => {
    const repo = createTempRepo({
      files: { 'exact.txt': lines(20, 'exact'), 'edited.txt': lines(20, 'edit'), 'far.txt': lines(10, 'far') },
    });
    onTestFinished(() => repo.cleanup());
    const { delta } = await runChange(engine, repo.dir, () => {
      fs.renameSync(
        path.join(repo.dir, 'exact.txt'),
        path.join(repo.dir, 'moved/exact.txt'.replace('moved/', 'moved-')),
      );
      repo.rm('edited.txt');
      repo.write('edited2.txt', lines(20, 'edit').replace('edit 3\n', 'EDIT 3\n'));
      repo.rm('far.txt');
      repo.write('far2.txt', lines(10, 'other'));
    });
    expect(rows(delta)).toEqual([
      'R edited.txt -> edited2.txt +1 -1',
      'D far.txt +0 -10',
      'A far2.txt +10 -0',
      'R exact.txt -> moved-exact.txt +0 -0',
    ]);
  });

  test('B9: CRLF, mixed line endings and no trailing newline are counted like git', async () => {
    const repo = createTempRepo({
      files: { 'crlf.txt': 'a\r\nb\r\nc\r\n', 'mixed.txt': 'a\nb\r\nc\n', 'nonl.txt': 'a\nb' },
    });
    onTestFinished(() => repo.cleanup());
    const { delta } = await runChange(engine, repo.dir, () => {
      repo.write('crlf.txt', 'a\r\nB\r\nc\r\n');
      repo.write('mixed.txt', 'a\r\nb\r\nc\n');
      repo.write('nonl.txt', 'a\nb\n');
    });
    expect(rows(delta)).toEqual(['M crlf.txt +1 -1', 'M mixed.txt +1 -1', 'M nonl.txt +1 -1']);
    expect(delta.files[2]!.patch).toContain('\\ No newline at end of file');
  });

  test('B10: binary by content (NUL) and by attribute: rows kept, counts 0, patch null', async () => {
    const repo = createTempRepo({
      files: { 'img.bin': Buffer.from([1, 0, 2, 3]), 'data.dat': 'text\n', '.gitattributes': '*.dat binary\n' },
    });
    onTestFinished(() => repo.cleanup());
    const { delta } = await runChange(engine, repo.dir, () => {
      repo.write('img.bin', Buffer.from([1, 0, 2, 4, 5]));
      repo.write('data.dat', 'text\nmore\n');
      repo.write('new.bin', Buffer.from([0, 0, 0]));
    });
    expect(rows(delta)).toEqual([
      'M data.dat +0 -0 binary (binary)',
      'M img.bin +0 -0 binary (binary)',
      'A new.bin +0 -0 binary (binary)',
    ]);
    expect(delta.binary_count).toBe(3);
    for (const f of delta.files) expect(f.patch).toBeNull();
    expect(delta.files[1]!.size_before).toBe(4);
    expect(delta.files[1]!.size_after).toBe(5);
  });

  test('B10: binary untracked files outside git keep their rows (hash only, no snapshot)', async () => {
    const repo = createTempRepo({ files: { 'blob.bin': Buffer.from([9, 0, 9]) }, git: false });
    onTestFinished(() => repo.cleanup());
    const { delta } = await runChange(engine, repo.dir, () => repo.write('blob.bin', Buffer.from([9, 0, 9, 9])));
    expect(rows(delta)).toEqual(['M blob.bin +0 -0 binary (binary)']);
  });

  test('B11: symlinks are their target text; a link escaping the workspace is never read through', async () => {
    const outside = createTempDir();
    onTestFinished(() => fs.rmSync(outside, { recursive: true, force: true }));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret\n');
    const repo = createTempRepo({ files: { 'target.txt': 't\n' } });
    onTestFinished(() => repo.cleanup());
    fs.symlinkSync('target.txt', path.join(repo.dir, 'inside-link'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(repo.dir, 'escape-link'));
    fs.symlinkSync(outside, path.join(repo.dir, 'dir-link'));
    repo.commit('links');
    const { delta } = await runChange(engine, repo.dir, () => {
      fs.writeFileSync(path.join(outside, 'secret.txt'), 'changed secret\n');
      fs.writeFileSync(path.join(outside, 'new-outside.txt'), 'x\n');
      fs.unlinkSync(path.join(repo.dir, 'inside-link'));
      fs.symlinkSync('elsewhere.txt', path.join(repo.dir, 'inside-link'));
    });
    expect(rows(delta)).toEqual(['M inside-link +1 -1']);
    expect(delta.files[0]!.patch).toContain('-target.txt\n\\ No newline at end of file\n+elsewhere.txt');
    expect(JSON.stringify(delta)).not.toContain('secret');
  });

  test('B12: chmod +x is reported as modified +0 -0', async () => {
    for (const git of [true, false]) {
      const repo = createTempRepo({ files: { 'run.sh': 'echo hi\n' }, git });
      onTestFinished(() => repo.cleanup());
      const { delta } = await runChange(engine, repo.dir, () => fs.chmodSync(path.join(repo.dir, 'run.sh'), 0o755));
      expect(rows(delta)).toEqual(['M run.sh +0 -0']);
      expect(delta.files[0]!.patch).toContain('old mode 100644\nnew mode 100755');
    }
  });

  test('B13: odd names (spaces, quotes, newline, UTF-8, leading dash, " -> ", non-UTF-8) round-trip', async () => {
    const names = ['with space.txt', 'quote"d.txt', 'new\nline.txt', 'ünï😀.txt', '-leading-dash.txt', 'a -> b.txt'];
    const repo = createTempRepo({ files: Object.fromEntries(names.map((n) => [n, 'old\n'])) });
    onTestFinished(() => repo.cleanup());
    const bad = Buffer.concat([Buffer.from(repo.dir + '/'), Buffer.from([0x62, 0xff, 0x61, 0x64])]);
    fs.writeFileSync(bad, 'old\n');
    repo.commit('odd');
    const { delta } = await runChange(engine, repo.dir, () => {
      for (const n of names) repo.write(n, 'new\n');
      fs.writeFileSync(bad, 'new\n');
    });
    expect(delta.changed_count).toBe(7);
    const byPath = new Map(delta.files.map((f) => [f.path, f]));
    for (const n of names) expect(byPath.get(n)?.change_type).toBe('modified');
    const nonUtf8 = delta.files.find((f) => f.path_base64 !== undefined)!;
    expect(Buffer.from(nonUtf8.path_base64!, 'base64')).toEqual(Buffer.from([0x62, 0xff, 0x61, 0x64]));
    for (const f of delta.files) {
      expect(path.isAbsolute(f.path)).toBe(false);
      expect(f.path.split('/')).not.toContain('..');
    }
  });

  test('B13: a subfolder workspace reports paths relative to that folder and nothing outside it', async () => {
    const repo = createTempRepo({ files: { 'top.txt': 't\n', 'pkg/app/a.txt': 'a\n', 'pkg/other.txt': 'o\n' } });
    onTestFinished(() => repo.cleanup());
    const { delta } = await runChange(engine, path.join(repo.dir, 'pkg/app'), () => {
      repo.write('top.txt', 'changed\n');
      repo.write('pkg/other.txt', 'changed\n');
      repo.write('pkg/app/a.txt', 'a\nb\n');
      repo.write('pkg/app/sub/new.txt', 'n\n');
    });
    expect(rows(delta)).toEqual(['M a.txt +1 -0', 'A sub/new.txt +1 -0']);
    expect(delta.workspace).toBe(path.join(repo.dir, 'pkg/app'));
  });
});
