import fs from 'node:fs';
import path from 'node:path';
import { runRundiff } from '../test-support/cli-process.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo, type TempRepo } from '../test-support/index.ts';

/** `rundiff revert` through the real binary against a real server and workspace. */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const rundiff = (args: string[], cwd: string) => runRundiff(args, cwd);

async function setup(): Promise<{ t: TestServer; repo: TempRepo }> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'a.txt': 'one\ntwo\n', 'b.txt': 'bee\n', 'old.txt': 'moved\n' } });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
  repo.write('a.txt', 'one\nTWO\n');
  repo.write('b.txt', 'BEE\n');
  repo.git('mv', 'old.txt', 'new.txt');
  await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
  return { t, repo };
}

describe('rundiff revert', () => {
  it('--dry-run prints the plan and the patches and writes nothing', async () => {
    const { t, repo } = await setup();
    const res = await rundiff(['revert', '--server', t.server.url, '--dry-run', 's1', 'r1'], repo.dir);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('restore     a.txt\n');
    expect(res.stdout).toContain('restore     new.txt -> old.txt\n');
    expect(res.stdout).toContain('-TWO\n+two\n');
    expect(res.stderr).toContain('dry run: 3 of 3 files would be written; nothing was');
    expect(repo.read('a.txt').toString()).toBe('one\nTWO\n');
  });

  it('reverts the files named (a rename by its old name), and reports where the revert was recorded', async () => {
    const { t, repo } = await setup();
    const res = await rundiff(['revert', '--server', t.server.url, 's1', 'run:r1', 'a.txt', 'old.txt'], repo.dir);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe('restore     a.txt (done)\nrestore     new.txt -> old.txt (done)\n');
    expect(res.stderr).toMatch(/2 of 2 files reverted \(recorded as run:revert-[0-9a-f-]+\)/);
    expect(repo.read('a.txt').toString()).toBe('one\ntwo\n');
    expect(repo.read('old.txt').toString()).toBe('moved\n');
    expect(repo.read('b.txt').toString()).toBe('BEE\n');
  });

  it('exits 1 on a conflict and prints the conflicting lines; an unknown path is a usage error', async () => {
    const { t, repo } = await setup();
    repo.write('a.txt', 'one\nTwo by hand\n');
    const res = await rundiff(['revert', '--server', t.server.url, 's1', 'r1', 'a.txt'], repo.dir);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('CONFLICT    a.txt: the file changed after the run');
    expect(res.stdout).toContain('    <<<<<<< now\n    Two by hand\n    =======\n    two\n');
    expect(res.stderr).toContain('nothing was reverted (revert_conflict');
    expect(repo.read('a.txt').toString()).toBe('one\nTwo by hand\n');

    const unknown = await rundiff(['revert', '--server', t.server.url, 's1', 'r1', 'nope.txt'], repo.dir);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('not changed by run:r1: nope.txt');
  });

  it('is all or nothing: one conflict and no file is written; --partial writes the clean ones', async () => {
    const { t, repo } = await setup();
    repo.write('a.txt', 'one\nTwo by hand\n');
    const res = await rundiff(['revert', '--server', t.server.url, 's1', 'r1'], repo.dir);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('CONFLICT    a.txt: the file changed after the run');
    expect(res.stderr).toContain('--partial writes the 2 file(s) that revert cleanly');
    expect(repo.read('b.txt').toString()).toBe('BEE\n');
    expect(repo.read('new.txt').toString()).toBe('moved\n');

    const partial = await rundiff(['revert', '--server', t.server.url, '--partial', 's1', 'r1'], repo.dir);
    expect(partial.code).toBe(1);
    expect(partial.stdout).toContain('restore     b.txt (done)\n');
    expect(partial.stderr).toContain('2 of 3 files reverted');
    expect(repo.read('a.txt').toString()).toBe('one\nTwo by hand\n');
    expect(repo.read('b.txt').toString()).toBe('bee\n');
    expect(repo.read('old.txt').toString()).toBe('moved\n');
  });

  it('--hunk undoes one hunk of one file; the rest of the file keeps the run', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const lines = (edit: Record<number, string> = {}) =>
      Array.from({ length: 20 }, (_, i) => `${edit[i + 1] ?? `l${i + 1}`}\n`).join('');
    const repo = createTempRepo({ files: { 'f.txt': lines() } });
    cleanups.push(() => repo.cleanup());
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    repo.write('f.txt', lines({ 2: 'TWO', 18: 'EIGHTEEN' }));
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    const res = await rundiff(['revert', '--server', t.server.url, 's1', 'r1', 'f.txt', '--hunk', '2'], repo.dir);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe('restore     f.txt (done)\n');
    expect(repo.read('f.txt').toString()).toBe(lines({ 2: 'TWO' }));
    const bad = await rundiff(['revert', '--server', t.server.url, 's1', 'r1', 'f.txt', '--hunk', '3'], repo.dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('f.txt has 2 hunk(s) in run:r1, not 3');
  });

  it('--hunk N --lines undoes only those lines of the hunk; a context line or --lines alone is refused', async () => {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const repo = createTempRepo({ files: { 'f.txt': 'a\nb\nc\nd\n' } });
    cleanups.push(() => repo.cleanup());
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    // One hunk, body lines: 1 ' a', 2 '-b', 3 '-c', 4 '+B', 5 '+C', 6 '+X', 7 ' d'.
    repo.write('f.txt', 'a\nB\nC\nX\nd\n');
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    const revert = (...more: string[]) =>
      rundiff(['revert', '--server', t.server.url, 's1', 'r1', 'f.txt', ...more], repo.dir);
    const context = await revert('--hunk', '1', '--lines', '1');
    expect(context.code).toBe(2);
    expect(context.stderr).toContain('is a context line');
    expect((await revert('--lines', '2')).code).toBe(2);
    expect((await revert('--hunk', '1', '--lines', '3-2')).code).toBe(2);
    expect(repo.read('f.txt').toString()).toBe('a\nB\nC\nX\nd\n');
    const res = await revert('--hunk', '1', '--lines', '2,4-5');
    expect(res.code).toBe(0);
    // b comes back for B and C; c stays removed; X stays.
    expect(repo.read('f.txt').toString()).toBe('a\nb\nX\nd\n');
  });

  it('takes the short id the timeline shows; an ambiguous one is refused listing the candidates', async () => {
    const { t, repo } = await setup();
    const ids = ['cc3e822d-1111-4111-8111-111111111111', 'cc3e9f00-2222-4222-8222-222222222222'];
    for (const [i, id] of ids.entries()) {
      await t.post({ type: 'run.started', session_id: 's1', run_id: id });
      repo.write(`run${i}.txt`, `${i}\n`);
      await t.post({ type: 'run.completed', session_id: 's1', run_id: id });
    }
    const short = await rundiff(['revert', '--server', t.server.url, 's1', 'run:cc3e822d'], repo.dir);
    expect(short.code).toBe(0);
    expect(short.stdout).toBe('restore     run0.txt (done)\n');
    expect(fs.existsSync(path.join(repo.dir, 'run0.txt'))).toBe(false);
    const bare = await rundiff(['revert', '--server', t.server.url, '--dry-run', 's1', 'cc3e9f00'], repo.dir);
    expect(bare.code).toBe(0);
    expect(bare.stdout).toContain('restore     run1.txt\n');
    const ambiguous = await rundiff(['revert', '--server', t.server.url, 's1', 'run:cc3e'], repo.dir);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(
      `change_ambiguous: run:cc3e names 2 changes in session "s1": run:${ids[0]}, run:${ids[1]}`,
    );
    expect(fs.existsSync(path.join(repo.dir, 'run1.txt'))).toBe(true);
  });

  it('with no server it says so and exits 2', async () => {
    const repo = createTempRepo({ git: false });
    cleanups.push(() => repo.cleanup());
    const res = await rundiff(['revert', '--server', 'http://127.0.0.1:9', 's1', 'r1'], repo.dir);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('no server at http://127.0.0.1:9');
  });
});
