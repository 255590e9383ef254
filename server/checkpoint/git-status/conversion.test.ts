import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { createTempDir, createTempRepo, type TempRepo } from '../../test-support/temp-repo.ts';
import { rows, runChange, testEngine } from '../../test-support/engine-harness.ts';
import { findRepo } from '../../git/index.ts';
import { mayConvert } from './converted.ts';
import { listingConfig } from './repository.ts';
import { rootAreaOf } from './capture.ts';

/**
 * Files git converts between blob and work tree (line endings, ident): git calls them clean, but
 * their blob is not what was on disk, so the start content must be the disk's bytes. Each case is
 * compared with `git diff --no-index` between a copy of the folder taken at the checkpoint and
 * the folder after the run.
 */

const engine = testEngine();
afterAll(() => engine.close());

/** A copy of the work tree without `.git`: the bytes on disk at this moment. */
function copyWorkTree(repo: TempRepo): string {
  const dir = createTempDir('rundiff-copy-');
  fs.cpSync(repo.dir, dir, { recursive: true, filter: (src) => path.basename(src) !== '.git' });
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `+A -D` for one file as git counts it between two plain files (no repository, no conversion). */
function noIndexCounts(before: string, after: string): string {
  let out: string;
  try {
    out = execFileSync('git', ['diff', '--no-index', '--numstat', '--', before, after], {
      encoding: 'utf8',
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    });
  } catch (err) {
    out = String((err as { stdout?: string }).stdout ?? '');
  }
  const [a, d] = out.trim().split('\t');
  return `+${a} -${d}`;
}

function repoWith(files: Record<string, string>, config: [string, string][] = []): TempRepo {
  const repo = createTempRepo({ files: {}, commit: false });
  onTestFinished(() => repo.cleanup());
  for (const [k, v] of config) repo.git('config', k, v);
  for (const [rel, text] of Object.entries(files)) repo.write(rel, text);
  repo.commit('initial');
  expect(repo.git('status', '--porcelain')).toBe('');
  return repo;
}

describe('content conversion', () => {
  test('text=auto eol=lf: a CRLF file with an LF blob starts from its CRLF bytes (+1 -0 like git)', async () => {
    const repo = repoWith({ '.gitattributes': '* text=auto eol=lf\n', 'f.txt': 'a\r\nb\r\nc\r\n' });
    // The blob is LF, the disk keeps CRLF.
    expect(repo.git('cat-file', '-p', 'HEAD:f.txt')).toBe('a\nb\nc\n');
    const copy = copyWorkTree(repo);
    const { delta } = await runChange(engine, repo.dir, () => fs.appendFileSync(path.join(repo.dir, 'f.txt'), 'd\r\n'));
    const counts = noIndexCounts(path.join(copy, 'f.txt'), path.join(repo.dir, 'f.txt'));
    expect(counts).toBe('+1 -0');
    expect(rows(delta)).toEqual([`M f.txt ${counts}`]);
    const patch = delta.files[0]!.patch ?? '';
    expect(patch.split('\n').filter((l) => l.startsWith('-') && !l.startsWith('---'))).toEqual([]);
  });

  test('core.autocrlf=true: LF blobs, CRLF on disk, one line edited counts one line', async () => {
    const repo = repoWith({ 'g.txt': 'one\r\ntwo\r\nthree\r\n' }, [['core.autocrlf', 'true']]);
    expect(repo.git('cat-file', '-p', 'HEAD:g.txt')).toBe('one\ntwo\nthree\n');
    const copy = copyWorkTree(repo);
    const { delta } = await runChange(engine, repo.dir, () =>
      fs.writeFileSync(path.join(repo.dir, 'g.txt'), 'one\r\nTWO\r\nthree\r\n'),
    );
    const counts = noIndexCounts(path.join(copy, 'g.txt'), path.join(repo.dir, 'g.txt'));
    expect(counts).toBe('+1 -1');
    expect(rows(delta)).toEqual([`M g.txt ${counts}`]);
  });

  test('ident: the expanded $Id$ on disk is the start content, not the blob', async () => {
    const repo = repoWith({ '.gitattributes': '*.c ident\n', 'id.c': '/* $Id$ */\nint a;\nint b;\n' });
    // Check the file out again so the disk holds the expanded form.
    repo.rm('id.c');
    repo.git('checkout', '--', 'id.c');
    expect(repo.read('id.c').toString()).toMatch(/\$Id: [0-9a-f]{40} \$/);
    const copy = copyWorkTree(repo);
    const { delta } = await runChange(engine, repo.dir, () => {
      const text = fs.readFileSync(path.join(repo.dir, 'id.c'), 'utf8');
      fs.writeFileSync(path.join(repo.dir, 'id.c'), text.replace('int b;', 'int c;'));
    });
    const counts = noIndexCounts(path.join(copy, 'id.c'), path.join(repo.dir, 'id.c'));
    expect(counts).toBe('+1 -1');
    expect(rows(delta)).toEqual([`M id.c ${counts}`]);
  });

  test('a converted file touched but not changed is not reported', async () => {
    const repo = repoWith({ '.gitattributes': '* text=auto eol=lf\n', 'f.txt': 'a\r\nb\r\n', 'other.txt': 'x\n' });
    const { delta } = await runChange(engine, repo.dir, () => {
      const future = new Date(Date.now() + 60_000);
      fs.utimesSync(path.join(repo.dir, 'f.txt'), future, future);
      fs.writeFileSync(path.join(repo.dir, 'f.txt'), 'a\r\nb\r\n');
    });
    expect(rows(delta)).toEqual([]);
  });

  test('the walk (an index only git can read) also starts a converted file from its disk bytes; touched only, it is no change', async () => {
    const repo = repoWith({ '.gitattributes': '* text=auto eol=lf\n', 'f.txt': 'a\r\nb\r\nc\r\n', 't.txt': 'x\r\n' });
    // A split index makes the engine walk instead of asking git status.
    repo.git('update-index', '--split-index');
    const copy = copyWorkTree(repo);
    const { delta } = await runChange(engine, repo.dir, () => {
      fs.appendFileSync(path.join(repo.dir, 'f.txt'), 'd\r\n');
      const future = new Date(Date.now() + 60_000);
      fs.writeFileSync(path.join(repo.dir, 't.txt'), 'x\r\n');
      fs.utimesSync(path.join(repo.dir, 't.txt'), future, future);
    });
    const counts = noIndexCounts(path.join(copy, 'f.txt'), path.join(repo.dir, 'f.txt'));
    expect(counts).toBe('+1 -0');
    expect(rows(delta)).toEqual([`M f.txt ${counts}`]);
  });

  test('a repository without any conversion source is not asked for blob sizes; each source is noticed', async () => {
    const repo = repoWith({ '.gitattributes': '*.dat binary\n', 'a.txt': 'a\n' });
    const area = async () => {
      const info = await findRepo(repo.dir);
      return rootAreaOf(repo.dir, info!);
    };
    const plain = await area();
    expect(mayConvert(plain, await listingConfig(plain, 10_000), ['.gitattributes'])).toBe(false);
    // Tracked attributes that convert.
    repo.write('.gitattributes', '*.txt text\n');
    expect(mayConvert(plain, await listingConfig(plain, 10_000), ['.gitattributes'])).toBe(true);
    repo.write('.gitattributes', '*.dat binary\n');
    // The repository's own attribute file.
    fs.mkdirSync(path.join(repo.dir, '.git', 'info'), { recursive: true });
    fs.writeFileSync(path.join(repo.dir, '.git', 'info', 'attributes'), '* ident\n');
    expect(mayConvert(plain, await listingConfig(plain, 10_000), ['.gitattributes'])).toBe(true);
    fs.rmSync(path.join(repo.dir, '.git', 'info', 'attributes'));
    // Config: autocrlf false converts nothing; input does.
    repo.git('config', 'core.autocrlf', 'false');
    expect(mayConvert(plain, await listingConfig(plain, 10_000), ['.gitattributes'])).toBe(false);
    repo.git('config', 'core.autocrlf', 'input');
    expect(mayConvert(plain, await listingConfig(plain, 10_000), ['.gitattributes'])).toBe(true);
  });
});
