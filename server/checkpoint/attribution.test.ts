import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { createTempRepo } from '../test-support/temp-repo.ts';
import { resolved, rows, runChange, testEngine } from '../test-support/engine-harness.ts';

const engine = testEngine();
afterAll(() => engine.close());

describe('attribution: checkpoint to checkpoint', () => {
  test('B1: a file dirty before the run and untouched during it is not reported', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'one\n', 'b.txt': 'b\n' } });
    onTestFinished(() => repo.cleanup());
    repo.write('a.txt', 'one\ndirty before\n');
    const { delta } = await runChange(engine, repo.dir, () => repo.write('b.txt', 'b\nc\n'));
    expect(rows(delta)).toEqual(['M b.txt +1 -0']);
  });

  test("B1: a pre-dirty file edited further reports only the run's edit", async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'one\ntwo\nthree\n' } });
    onTestFinished(() => repo.cleanup());
    repo.write('a.txt', 'one\ntwo\nthree\nbefore run\n');
    const { delta } = await runChange(engine, repo.dir, () => repo.write('a.txt', 'ONE\ntwo\nthree\nbefore run\n'));
    expect(rows(delta)).toEqual(['M a.txt +1 -1']);
    expect(delta.files[0]!.patch).toContain('-one\n+ONE\n');
    expect(delta.files[0]!.patch).not.toContain('+before run');
  });

  test('B2: touching a file (mtime changes, bytes do not) is not reported', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'same\n' }, git: false });
    onTestFinished(() => repo.cleanup());
    const { delta } = await runChange(engine, repo.dir, () => {
      const future = new Date(Date.now() + 60_000);
      fs.utimesSync(path.join(repo.dir, 'a.txt'), future, future);
      repo.write('a.txt', 'same\n'); // rewrite with the same content too
    });
    expect(delta.changed_count).toBe(0);
    expect(delta.truncated).toBe(false);
  });

  test('B2: a file modified and restored during the run is not reported (git and non-git)', async () => {
    for (const git of [true, false]) {
      const repo = createTempRepo({ files: { 'a.txt': 'orig\n', 'untracked-later.txt': 'x' }, git });
      onTestFinished(() => repo.cleanup());
      const { delta } = await runChange(engine, repo.dir, () => {
        repo.write('a.txt', 'changed\n');
        repo.write('a.txt', 'orig\n');
        repo.write('tmp.txt', 'temp');
        repo.rm('tmp.txt');
      });
      expect(delta.changed_count).toBe(0);
    }
  });

  test('B3: an edit keeping size and mtime is found (racy file compared by content)', async () => {
    for (const git of [true, false]) {
      const repo = createTempRepo({ files: { 'a.txt': 'abc\n' }, git });
      onTestFinished(() => repo.cleanup());
      const abs = path.join(repo.dir, 'a.txt');
      const t = new Date(Math.floor(Date.now() / 1000) * 1000); // a whole second: utimes keeps it exactly
      fs.utimesSync(abs, t, t);
      if (git) repo.git('update-index', '--refresh');
      const before = fs.statSync(abs);
      const { delta } = await runChange(engine, repo.dir, () => {
        fs.writeFileSync(abs, 'xyz\n');
        fs.utimesSync(abs, t, t);
      });
      expect(fs.statSync(abs).mtimeMs).toBe(before.mtimeMs);
      expect(fs.statSync(abs).size).toBe(before.size);
      expect(rows(delta)).toEqual(['M a.txt +1 -1']);
      // The start side is the content at the checkpoint (in a git workspace its index blob, read
      // only once the content now turned out different).
      expect(delta.files[0]!.patch).toContain('-abc\n+xyz\n');
    }
  });

  test('B3: same size, mtime restored on a file far older than the checkpoint is still found', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'abc\n' } });
    onTestFinished(() => repo.cleanup());
    const abs = path.join(repo.dir, 'a.txt');
    const old = new Date(Date.now() - 3600_000);
    fs.utimesSync(abs, old, old);
    repo.git('update-index', '--refresh');
    const { delta } = await runChange(engine, repo.dir, () => {
      fs.writeFileSync(abs, 'xyz\n');
      fs.utimesSync(abs, old, old);
    });
    expect(rows(delta)).toEqual(['M a.txt +1 -1']);
  });

  test('B4: a commit during the run is still reported (start content to end content)', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'one\n' } });
    onTestFinished(() => repo.cleanup());
    const { delta } = await runChange(engine, repo.dir, () => {
      repo.write('a.txt', 'one\ntwo\n');
      repo.write('b.txt', 'new\n');
      repo.commit('agent commit');
    });
    expect(rows(delta)).toEqual(['M a.txt +1 -0', 'A b.txt +1 -0']);
  });

  test('B4: a stash during the run leaves nothing to report; an edit then stash reports nothing, a stash of pre-dirty work reports its revert', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'one\n' } });
    onTestFinished(() => repo.cleanup());
    repo.write('a.txt', 'one\ndirty\n');
    const { delta } = await runChange(engine, repo.dir, () => {
      repo.git('stash', '-q');
    });
    // The run removed the pre-existing edit from the work tree: that is its change.
    expect(rows(delta)).toEqual(['M a.txt +0 -1']);
  });

  test('B4: a branch switch and a reset during the run report the work tree difference', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'main\n', 'same.txt': 'same\n' } });
    onTestFinished(() => repo.cleanup());
    repo.git('checkout', '-q', '-b', 'other');
    repo.write('a.txt', 'other\n');
    repo.write('only-other.txt', 'x\n');
    repo.commit('other');
    repo.git('checkout', '-q', 'main');
    const { delta } = await runChange(engine, repo.dir, () => {
      repo.git('checkout', '-q', 'other');
    });
    expect(rows(delta)).toEqual(['M a.txt +1 -1', 'A only-other.txt +1 -0']);
    const second = await runChange(engine, repo.dir, () => {
      repo.git('reset', '-q', '--hard', 'main');
    });
    expect(rows(second.delta)).toEqual(['M a.txt +1 -1', 'D only-other.txt +0 -1']);
  });

  test('B5: edits by another process during the run count', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'one\n' } });
    onTestFinished(() => repo.cleanup());
    const { delta } = await runChange(engine, repo.dir, () => {
      repo.git('mv', 'a.txt', 'b.txt'); // a git process moves the file
      fs.appendFileSync(path.join(repo.dir, 'c.txt'), 'appended\n');
    });
    expect(rows(delta)).toEqual(['R a.txt -> b.txt +0 -0', 'A c.txt +1 -0']);
  });

  test('B2: peek shows the change so far and keeps the checkpoint', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'one\n' } });
    onTestFinished(() => repo.cleanup());
    await engine.start({ sessionId: 'p', changeId: 'run:p', runId: 'p', workspace: await resolved(repo.dir) });
    repo.write('a.txt', 'two\n');
    const peeked = await engine.peek('p', 'run:p');
    expect(rows(peeked!)).toEqual(['M a.txt +1 -1']);
    expect(engine.has('p', 'run:p')).toBe(true);
    repo.write('a.txt', 'one\n');
    const done = await engine.complete('p', 'run:p');
    expect(done!.changed_count).toBe(0);
    expect(engine.has('p', 'run:p')).toBe(false);
    expect(await engine.complete('p', 'run:p')).toBeNull();
  });
});
