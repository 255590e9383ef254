import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { createTempDir } from '../../test-support/temp-repo.ts';
import {
  COARSE_TIME_SLACK_MS,
  FINE_TIME_SLACK_MS,
  sameFolderAbove,
  settledBefore,
  untouchedSince,
} from './untouched.ts';

function tree(): string {
  const dir = createTempDir('rundiff-untouched-');
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, 'build/js'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'build/js/app.js'), 'x\n');
  return dir;
}

describe('a file untouched since a time (ctime of it and the folders above it)', () => {
  test('a file and its folders last changed before the time are untouched; the same tree after it is not', () => {
    const dir = tree();
    const later = Date.now() + 60_000;
    expect(untouchedSince(dir, '', 'build/js/app.js', later)).toBe(true);
    // Control: a time before the tree was written.
    expect(untouchedSince(dir, '', 'build/js/app.js', Date.now() - 60_000)).toBe(false);
  });

  test('a missing path, a folder or a path outside the base is not an untouched file', () => {
    const dir = tree();
    const later = Date.now() + 60_000;
    expect(untouchedSince(dir, '', 'build/js/gone.js', later)).toBe(false);
    expect(untouchedSince(dir, '', 'build/js', later)).toBe(false);
    expect(untouchedSince(dir, 'src', 'build/js/app.js', later)).toBe(false);
  });

  test('the nearest folder of the same inode is the base; a folder replaced by another is not', () => {
    const dir = tree();
    const ino = fs.lstatSync(path.join(dir, 'build')).ino;
    expect(sameFolderAbove(dir, new Map([['build', ino]]), 'build/js/app.js')).toBe('build');
    fs.rmSync(path.join(dir, 'build'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'keep'));
    fs.mkdirSync(path.join(dir, 'build/js'), { recursive: true });
    const now = fs.lstatSync(path.join(dir, 'build')).ino;
    expect(sameFolderAbove(dir, new Map([['build', now === ino ? -1 : ino]]), 'build/js/app.js')).toBe('');
  });
});

describe('settled before a checkpoint began, within the slack of its file system times', () => {
  const start = 1_800_000_000_000.5;
  test('a fine time (a part of a second) is settled past the clock slack, not within it', () => {
    expect(settledBefore({ ctimeMs: start - FINE_TIME_SLACK_MS - 1, mtimeMs: 0 }, start)).toBe(true);
    expect(settledBefore({ ctimeMs: start - FINE_TIME_SLACK_MS + 1, mtimeMs: 0 }, start)).toBe(false);
    // The later of ctime and mtime counts.
    expect(settledBefore({ ctimeMs: start - 5_000, mtimeMs: start + 10 }, start)).toBe(false);
  });

  test('a whole-second time may come from a coarse file system: it needs the full racy margin', () => {
    const whole = 1_800_000_000_000 - 1_000;
    expect(settledBefore({ ctimeMs: whole, mtimeMs: whole }, start)).toBe(false);
    expect(settledBefore({ ctimeMs: whole, mtimeMs: whole }, whole + COARSE_TIME_SLACK_MS + 1)).toBe(true);
  });

  test('a file written just before the start is vouched for; the same file written after it is not', () => {
    const dir = tree();
    const st = fs.lstatSync(path.join(dir, 'build/js/app.js'));
    const last = Math.max(st.ctimeMs, st.mtimeMs);
    const slack = last % 1000 === 0 ? COARSE_TIME_SLACK_MS : FINE_TIME_SLACK_MS;
    expect(untouchedSince(dir, '', 'build/js/app.js', last + slack + 100)).toBe(true);
    expect(untouchedSince(dir, '', 'build/js/app.js', last + slack / 2)).toBe(false);
  });
});
