import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempDir, createTempRepo, type TempRepo } from '../test-support/index.ts';

/**
 * The session's net change, checked against git itself: a copy of the workspace taken before the
 * first run and the end state, compared by `git diff --no-index`, must read the same as the net
 * change of the three runs between them.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(files: Record<string, string>): Promise<{ t: TestServer; repo: TempRepo }> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  return { t, repo };
}

async function run(t: TestServer, runId: string, edit: () => void): Promise<void> {
  expect((await t.post({ type: 'run.started', session_id: 's1', run_id: runId })).body.tracking).toBe(true);
  edit();
  expect((await t.post({ type: 'run.completed', session_id: 's1', run_id: runId })).status).toBe(200);
}

/** A copy of the workspace's files (not `.git`), modes kept. */
function copyTree(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true, filter: (src) => path.basename(src) !== '.git' });
}

/** `git diff --no-index -M before after` with the two folder names taken out of the paths. */
function gitNoIndex(parent: string): { patch: string; numstat: string[] } {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, {
        cwd: parent,
        encoding: 'utf8',
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      });
    } catch (err) {
      const e = err as { status?: number; stdout?: string };
      if (e.status === 1 && e.stdout !== undefined) return e.stdout; // differences found
      throw err;
    }
  };
  const strip = (s: string) =>
    s
      .replace(/([ab])\/(before|after)\//g, '$1/')
      .replace(/^(rename (from|to)) (before|after)\//gm, '$1 ')
      .replace(/\{before => after\}\//g, '')
      .replace(/(^|\t|=> )(before|after)\//gm, '$1');
  return {
    patch: strip(git('diff', '--no-index', '-M', 'before', 'after')),
    numstat: strip(git('diff', '--no-index', '-M', '--numstat', 'before', 'after'))
      .trim()
      .split('\n')
      .map((l) => l.replace(/\/dev\/null => |=> \/dev\/null| => \/dev\/null/g, '').trim())
      .sort(),
  };
}

const stanzas = (patch: string) =>
  patch
    .split(/^(?=diff --git )/m)
    .filter((s) => s.startsWith('diff --git'))
    .sort();

describe('GET /api/hermes/sessions/:id/net-change', () => {
  it('the session view of three runs equals git diff --no-index between a copy taken before the first run and the end state', async () => {
    const base = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const { t, repo } = await setup({
      'a.txt': base,
      'c.txt': 'moved later\nsecond line\nthird line\n',
      'e.txt': 'to be deleted\n',
      'g.sh': '#!/bin/sh\necho g\n',
      'keep.txt': 'touched and put back\n',
    });
    const parent = createTempDir('rundiff-net-');
    cleanups.push(() => fs.rmSync(parent, { recursive: true, force: true }));
    copyTree(repo.dir, path.join(parent, 'before'));

    await run(t, 'r1', () => {
      repo.write('a.txt', base.replace('line 3\n', 'line three\n'));
      repo.write('b.txt', 'added by r1\n');
      fs.renameSync(path.join(repo.dir, 'c.txt'), path.join(repo.dir, 'd.txt'));
      repo.write('keep.txt', 'changed for a while\n');
    });
    await run(t, 'r2', () => {
      repo.write('a.txt', base.replace('line 3\n', 'line three\n').replace('line 25\n', 'line 25 and more\n'));
      repo.write('b.txt', 'added by r1\nand grown by r2\n');
      repo.rm('e.txt');
      repo.write('keep.txt', 'touched and put back\n');
    });
    await run(t, 'r3', () => {
      repo.rm('b.txt'); // added, then removed: no net change
      repo.write('f.txt', 'new in r3\n');
      fs.chmodSync(path.join(repo.dir, 'g.sh'), 0o755);
      repo.write('d.txt', 'moved later\nsecond line\nthird line\nand a fourth\n');
    });
    copyTree(repo.dir, path.join(parent, 'after'));

    const res = await t.get('/api/hermes/sessions/s1/net-change');
    expect(res.status).toBe(200);
    const net = res.body.change;
    expect(net.change_ids).toEqual(['run:r1', 'run:r2', 'run:r3']);
    const git = gitNoIndex(parent);
    const ours = net.files
      .map(
        (f: { path: string; old_path: string | null; additions: number; deletions: number }) =>
          `${f.additions}\t${f.deletions}\t${f.old_path !== null ? `${f.old_path} => ${f.path}` : f.path}`,
      )
      .sort();
    expect(ours).toEqual(git.numstat);
    // Sanity: the comparison sees every kind (modified, renamed and edited, deleted, added, mode).
    expect(git.numstat).toHaveLength(5);

    const whole = await t.get('/api/hermes/sessions/s1/net-change/patch');
    expect(whole.status).toBe(200);
    expect(stanzas(git.patch)).toHaveLength(5);
    expect(stanzas(whole.text)).toEqual(stanzas(git.patch));

    // One file's patch through its own route, as for a run's change.
    const a = net.files.find((f: { path: string }) => f.path === 'a.txt');
    const one = await t.get(`/api/hermes/sessions/s1/net-change/files/${a.id}`);
    expect(one.body.file.patch).toContain('-line 3\n+line three\n');
    expect(one.body.file.patch).toContain('+line 25 and more\n');
  });

  it('a range of runs: paths also changed by a run outside it, or between its runs by no run, are flagged', async () => {
    const { t, repo } = await setup({ 'a.txt': 'one\n', 'b.txt': 'bee\n' });
    await run(t, 'r1', () => repo.write('a.txt', 'one by r1\n'));
    await run(t, 'r2', () => repo.write('b.txt', 'bee by r2\n'));
    repo.write('b.txt', 'bee edited by hand\n'); // between r2 and r3, recorded by no run
    await run(t, 'r3', () => {
      repo.write('a.txt', 'one by r3\n');
      repo.write('b.txt', 'bee by r3\n');
    });
    const range = await t.get('/api/hermes/sessions/s1/net-change?from=run%3Ar2&to=run%3Ar3');
    expect(range.status).toBe(200);
    const byPath = Object.fromEntries(range.body.change.files.map((f: { path: string }) => [f.path, f]));
    expect(range.body.change.change_ids).toEqual(['run:r2', 'run:r3']);
    expect(byPath['a.txt']).toMatchObject({ outside_change_ids: ['run:r1'], interleaved: false });
    expect(byPath['b.txt']).toMatchObject({ outside_change_ids: [], interleaved: true });
    // The net goes from r2's start to r3's end, whatever happened between.
    const b = await t.get(`/api/hermes/sessions/s1/net-change/files/${byPath['b.txt'].id}?from=run%3Ar2&to=run%3Ar3`);
    expect(b.body.file.patch).toContain('-bee\n+bee by r3\n');

    // The whole session: nothing outside, a.txt from its first start.
    const all = await t.get('/api/hermes/sessions/s1/net-change');
    const a = all.body.change.files.find((f: { path: string }) => f.path === 'a.txt');
    expect(a).toMatchObject({ outside_change_ids: [], interleaved: false, additions: 1, deletions: 1 });

    // A later run is seen at once (an answer is reused only until the session is written again).
    await run(t, 'r4', () => repo.write('c.txt', 'new in r4\n'));
    const again = await t.get('/api/hermes/sessions/s1/net-change');
    expect(again.body.change.files.map((f: { path: string }) => f.path)).toEqual(['a.txt', 'b.txt', 'c.txt']);

    expect((await t.get('/api/hermes/sessions/s1/net-change?from=run%3Anope')).status).toBe(404);
    expect((await t.get('/api/hermes/sessions/s1/net-change?from=run%3Ar3&to=run%3Ar1')).status).toBe(400);
    expect((await t.get('/api/hermes/sessions/nope/net-change')).status).toBe(404);
  });
});
