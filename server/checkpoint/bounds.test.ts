import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, onTestFinished, test } from 'vitest';
import { DEFAULT_LIMITS } from '../config.ts';
import { createTempRepo } from '../test-support/temp-repo.ts';
import { createEngine } from './index.ts';
import { resolved, rows, runChange, testEngine } from '../test-support/engine-harness.ts';

const engines: ReturnType<typeof testEngine>[] = [];
const engineWith = (limits: Parameters<typeof testEngine>[0]) => {
  const e = testEngine(limits);
  engines.push(e);
  return e;
};
afterAll(async () => {
  for (const e of engines) await e.close();
});

const files = (n: number, prefix = 'f'): Record<string, string> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${String(i).padStart(2, '0')}.txt`, `${i}\n`]));

describe('bounds', () => {
  test('B17: exactly maxScannedFiles files is not truncated; one more is, with exact counts over what was scanned', async () => {
    const repo = createTempRepo({ files: files(5) });
    onTestFinished(() => repo.cleanup());
    const five = engineWith({ maxScannedFiles: 5 });
    expect((await runChange(five, repo.dir, () => undefined)).start).toMatchObject({
      scanned_files: 5,
      truncated: false,
      truncated_reasons: [],
    });
    repo.write('f05.txt', '5\n');
    repo.commit('six');
    const { start, delta } = await runChange(five, repo.dir, () => {
      repo.write('f00.txt', 'changed\n'); // scanned: reported
      repo.rm('f05.txt'); // never scanned: not reported as deleted
    });
    expect(start).toMatchObject({ scanned_files: 5, truncated: true, truncated_reasons: ['scan_files'] });
    expect(rows(delta)).toEqual(['M f00.txt +1 -1']);
    expect(delta.truncated_reasons).toEqual(['scan_files']);
  });

  test('B18: files in folders a cut scan never reached are neither added nor deleted', async () => {
    const repo = createTempRepo({ files: { 'a/1.txt': '1\n', 'a/2.txt': '2\n', 'z/1.txt': '1\n', 'z/2.txt': '2\n' } });
    onTestFinished(() => repo.cleanup());
    const e = engineWith({ maxScannedFiles: 2 });
    const { delta } = await runChange(e, repo.dir, () => {
      repo.rm('z/1.txt');
      repo.write('z/3.txt', 'new\n');
      repo.write('a/1.txt', 'one\n');
    });
    expect(rows(delta)).toEqual(['M a/1.txt +1 -1']);
    expect(delta.truncated_reasons).toEqual(['scan_files']);
  });

  test('B18: the soft scan deadline cuts the scan (scan_time) and never reports unscanned files as deleted', async () => {
    // The deadline is checked before each folder. The walk's clock steps 600 ms per reading, so a 1 s
    // deadline lets exactly the root folder be walked, whatever the machine's speed.
    const tree = Object.fromEntries(
      Array.from({ length: 400 }, (_, i) => [`d${String(i).padStart(3, '0')}/f.txt`, `${i}\n`]),
    );
    const repo = createTempRepo({ files: tree });
    onTestFinished(() => repo.cleanup());
    const e = createEngine({
      limits: Object.freeze({ ...DEFAULT_LIMITS, scanTimeoutMs: 1_000 }),
      dbPath: null,
      scanner: { walkClockStepMs: 600 },
      // The walk's own deadline (plain folders, and git workspaces over the file limit).
      walkOnly: true,
    });
    engines.push(e);
    const { start, delta } = await runChange(e, repo.dir, () => repo.rm('d399/f.txt'));
    expect(start.truncated_reasons).toContain('scan_time');
    expect(start.scanned_files).toBeLessThan(400);
    expect(start.scanned_files).toBe(0); // only the root was walked, and it holds no file
    expect(delta.truncated).toBe(true);
    expect(delta.truncated_reasons).toContain('scan_time');
    expect(delta.files.map((f) => f.path)).not.toContain('d399/f.txt');
  });

  test('B17: rows beyond maxChangedFiles are counted, not stored (omitted_count, rows)', async () => {
    const repo = createTempRepo({ files: files(5) });
    onTestFinished(() => repo.cleanup());
    const e = engineWith({ maxChangedFiles: 2 });
    const { delta } = await runChange(e, repo.dir, () => {
      for (let i = 0; i < 5; i++) repo.write(`f0${i}.txt`, `changed ${i}\n`);
    });
    expect(delta.changed_count).toBe(5);
    expect(delta.modified_count).toBe(5);
    expect(delta.files.map((f) => f.path)).toEqual(['f00.txt', 'f01.txt']);
    expect(delta.omitted_count).toBe(3);
    expect(delta.truncated_reasons).toEqual(['rows']);
  });

  test('B17: per-file patch cap cuts the patch, counts stay exact (file_patch); the run budget nulls what does not fit (run_budget)', async () => {
    const big = Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join('');
    const repo = createTempRepo({ files: { 'a.txt': big, 'b.txt': big } });
    onTestFinished(() => repo.cleanup());
    const e = engineWith({ maxFilePatchBytes: 300, maxRunPatchBytes: 400 });
    const { delta } = await runChange(e, repo.dir, () => {
      repo.write('a.txt', big.replace(/line/g, 'LINE'));
      repo.write('b.txt', big.replace(/line/g, 'LINE'));
    });
    expect(delta.files[0]).toMatchObject({ path: 'a.txt', additions: 200, deletions: 200, truncated: true });
    expect(delta.files[0]!.patch_bytes).toBeLessThanOrEqual(300);
    expect(delta.files[1]).toMatchObject({
      path: 'b.txt',
      additions: 200,
      deletions: 200,
      patch: null,
      omitted_reason: 'budget',
    });
    expect(delta.truncated_reasons).toEqual(['file_patch', 'run_budget']);
  });

  test('B17: over the snapshot size: too_large outside git; exact counts for a clean tracked file in git', async () => {
    const big = Array.from({ length: 100 }, (_, i) => `row ${i}\n`).join('');
    const plain = createTempRepo({ git: false, files: { 'big.txt': big } });
    onTestFinished(() => plain.cleanup());
    const e = engineWith({ maxSnapshotBytes: 100 });
    const out = await runChange(e, plain.dir, () => plain.write('big.txt', big + 'more\n'));
    expect(rows(out.delta)).toEqual(['M big.txt +0 -0 (too_large)']);
    const repo = createTempRepo({ files: { 'big.txt': big } });
    onTestFinished(() => repo.cleanup());
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(repo.dir, 'big.txt'), old, old);
    repo.git('update-index', '--refresh');
    const inGit = await runChange(e, repo.dir, () => repo.write('big.txt', big + 'more\n'));
    expect(rows(inGit.delta)).toEqual(['M big.txt +1 -0']);
  });

  test('B19: over the memory cap a changed file is still reported (modified, no_snapshot, memory_cap); unchanged ones are not', async () => {
    const repo = createTempRepo({ git: false, files: { 'a.txt': 'aaaa\n', 'b.txt': 'bbbb\n', 'c.txt': 'cccc\n' } });
    onTestFinished(() => repo.cleanup());
    const e = engineWith({ maxCheckpointMemoryBytes: 6 });
    const { start, delta } = await runChange(e, repo.dir, () => {
      repo.write('b.txt', 'BBBB\n');
      repo.write('c.txt', 'CCCC\n');
    });
    expect(start.truncated_reasons).toEqual(['memory_cap']);
    // a.txt got the one snapshot that fitted; b and c were hashed: their change is found by hash, no bytes for a patch.
    expect(rows(delta)).toEqual(['M b.txt +0 -0 (no_snapshot)', 'M c.txt +0 -0 (no_snapshot)']);
    expect(delta.truncated_reasons).toEqual(['memory_cap']);
  });

  test('B19: a clean git checkpoint holds no content memory', async () => {
    const repo = createTempRepo({ files: files(30) });
    onTestFinished(() => repo.cleanup());
    const old = new Date(Date.now() - 60_000);
    for (const f of Object.keys(files(30))) fs.utimesSync(path.join(repo.dir, f), old, old);
    repo.git('update-index', '--refresh');
    const e = engineWith({});
    await e.start({ sessionId: 'm', changeId: 'run:m', runId: 'm', workspace: await resolved(repo.dir) });
    expect(e.memoryBytes()).toBe(0);
    repo.write('dirty.txt', 'untracked\n');
    await e.start({ sessionId: 'm', changeId: 'run:m2', runId: 'm2', workspace: await resolved(repo.dir) });
    expect(e.memoryBytes()).toBe('untracked\n'.length);
  });

  test('B18: a broken git index degrades to a file-system result, never an error or "no changes"', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    fs.writeFileSync(path.join(repo.dir, '.git/index'), 'garbage that is not an index');
    const e = engineWith({});
    const { start, delta } = await runChange(e, repo.dir, () => repo.write('a.txt', 'b\n'));
    expect(start).toMatchObject({ workspace_kind: 'git', truncated: true, truncated_reasons: ['degraded'] });
    expect(rows(delta)).toEqual(['M a.txt +1 -1']);
    expect(delta.truncated_reasons).toEqual(['degraded']);
  });

  test('B18: a hung git is killed after its deadline (git_timeout) and tracking still answers', async () => {
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    onTestFinished(() => repo.cleanup());
    // A FIFO as the index: git blocks opening it until killed.
    fs.rmSync(path.join(repo.dir, '.git/index'));
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [path.join(repo.dir, '.git/index')]);
    // A short scan deadline makes git's kill deadline its 2 s floor; the walk's clock stands still, so the
    // walk itself is never cut on a slow machine and only git's deadline is under test.
    const e = createEngine({
      limits: Object.freeze({ ...DEFAULT_LIMITS, scanTimeoutMs: 100 }),
      dbPath: null,
      scanner: { walkClockStepMs: 0 },
    });
    engines.push(e);
    // git blocks forever on the FIFO: any answer at all means it was killed at its deadline.
    const { start, delta } = await runChange(e, repo.dir, () => repo.write('a.txt', 'b\n'));
    expect(start.truncated_reasons).toContain('git_timeout');
    expect(rows(delta)).toEqual(['M a.txt +1 -1']);
  });
});
