import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createTempDir } from '../test-support/index.ts';
import { createWatchBudget, heldInotifyWatches, systemWatchLimit, watchBudgetSize } from './watch-budget.ts';

describe('folder watch budget', () => {
  it('is the configured cap, lowered to a quarter of the system limit editors and other tools share', () => {
    expect(watchBudgetSize(20_000, 192_536)).toBe(20_000);
    expect(watchBudgetSize(20_000, 8_192)).toBe(2_048);
    expect(watchBudgetSize(20_000, null)).toBe(20_000);
  });

  it('reads the system limit from its file, and says null where there is none', () => {
    const dir = createTempDir();
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.writeFileSync(path.join(dir, 'max_user_watches'), '65536\n');
    expect(systemWatchLimit(path.join(dir, 'max_user_watches'))).toBe(65_536);
    expect(systemWatchLimit(path.join(dir, 'absent'))).toBeNull();
    fs.writeFileSync(path.join(dir, 'garbage'), 'many\n');
    expect(systemWatchLimit(path.join(dir, 'garbage'))).toBeNull();
  });

  it('a spent budget refuses the next watch until one is released', () => {
    const b = createWatchBudget(2);
    expect([b.take(), b.take(), b.take()]).toEqual([true, true, false]);
    expect(b.held()).toBe(2);
    b.release(1);
    expect(b.take()).toBe(true);
    b.release(5);
    expect(b.held()).toBe(0);
  });

  it('counts the inotify watches the kernel lists for this process, and gives them back when closed', () => {
    const before = heldInotifyWatches();
    expect(before).not.toBeNull(); // Linux: the kernel lists them
    const dirs = [createTempDir(), createTempDir(), createTempDir()];
    onTestFinished(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
    const watchers = dirs.map((d) => fs.watch(d));
    try {
      expect(heldInotifyWatches()).toBe(before! + 3);
    } finally {
      watchers.forEach((w) => w.close());
    }
    expect(heldInotifyWatches()).toBe(before);
  });

  it('reads only whole `inotify wd:` lines of each descriptor, and says null where there is no listing', () => {
    const dir = createTempDir();
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.writeFileSync(
      path.join(dir, '3'),
      'pos:\t0\nflags:\t02004000\ninotify wd:2 ino:10 sdev:30\ninotify wd:1 ino:11 sdev:30\n',
    );
    fs.writeFileSync(path.join(dir, '4'), 'pos:\t0\nflags:\t02\nnot an inotify wd: line\n');
    fs.writeFileSync(path.join(dir, '5'), 'inotify wd:1 ino:12 sdev:30\n');
    expect(heldInotifyWatches(dir)).toBe(3);
    expect(heldInotifyWatches(path.join(dir, 'absent'))).toBeNull();
  });
});
