import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo, deepFolders, inDeep, readDeep, removeDeep, type TempRepo } from '../test-support/index.ts';

/**
 * Undoing changes to files on paths longer than one system call takes (Linux: 4,096 bytes): the
 * revert reaches them a folder at a time through the workspace's opened descriptor, like any other
 * file, whole run, one file or one hunk. The trees are built and read by relative steps
 * (`deep-tree.ts`).
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const numbered = (n: number, edit: Record<number, string> = {}) =>
  Array.from({ length: n }, (_, i) => `${edit[i + 1] ?? `line ${i + 1}`}\n`).join('');

const base = '/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1';

const revert = (t: TestServer, body: object = {}) =>
  t.request('POST', `${base}/revert`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe.each([
  ['a git workspace', true],
  ['a plain folder', false],
])('reverting files on paths over 4,096 bytes in %s', (_label, useGit) => {
  async function setup(): Promise<{ t: TestServer; repo: TempRepo; deep: string[]; key: string }> {
    const t = await startTestServer();
    cleanups.push(() => t.close());
    const repo = createTempRepo({ git: useGit, files: { 'short.txt': 'one\n' } });
    cleanups.push(() => removeDeep(repo.dir));
    const deep = deepFolders('r', 4300);
    inDeep(repo.dir, deep, `printf '${numbered(40).replace(/\n/g, '\\n')}' > edit.txt; printf 'gone\\n' > drop.txt`);
    // git cannot add files there (it cannot open their folders): in a git workspace they stay untracked.
    await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    repo.write('short.txt', 'two\n');
    const edited = numbered(40, { 5: 'FIVE by the run', 30: 'THIRTY by the run' });
    inDeep(
      repo.dir,
      deep,
      `printf '${edited.replace(/\n/g, '\\n')}' > edit.txt; rm drop.txt; printf 'new\\n' > add.txt`,
    );
    await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
    return { t, repo, deep, key: deep.join('/') };
  }

  it('the whole run: the modified, deleted and added files on the long path come back, beside a short one', async () => {
    const { t, repo, deep, key } = await setup();
    const files = (await t.get(`${base}/files`)).body.files as { path: string; change_type: string }[];
    expect(files.map((f) => `${f.change_type} ${f.path}`).sort()).toEqual(
      [`added ${key}/add.txt`, `deleted ${key}/drop.txt`, `modified ${key}/edit.txt`, 'modified short.txt'].sort(),
    );
    const res = await revert(t);
    expect(res.status).toBe(200);
    expect(res.body.applied_count).toBe(4);
    expect(readDeep(repo.dir, deep, 'edit.txt')).toBe(numbered(40));
    expect(readDeep(repo.dir, deep, 'drop.txt')).toBe('gone\n');
    expect(readDeep(repo.dir, deep, 'add.txt')).toBeNull();
    expect(repo.read('short.txt').toString()).toBe('one\n');
    // The revert is a run of its own, recorded with the same long paths.
    const undone = (await t.get(`/api/hermes/sessions/s1/workspace-run-changes/${res.body.revert_change_id}`)).body
      .change;
    expect(undone.files.map((f: { path: string; change_type: string }) => `${f.change_type} ${f.path}`).sort()).toEqual(
      [`added ${key}/drop.txt`, `deleted ${key}/add.txt`, `modified ${key}/edit.txt`, 'modified short.txt'].sort(),
    );
  });

  it('one file, then one hunk of another run: each written through the long path', async () => {
    const { t, repo, deep, key } = await setup();
    const files = (await t.get(`${base}/files`)).body.files as { id: string; path: string }[];
    const drop = files.find((f) => f.path === `${key}/drop.txt`)!;
    const one = await revert(t, { file_ids: [drop.id] });
    expect(one.status).toBe(200);
    expect(one.body.files.map((f: { path: string }) => f.path)).toEqual([`${key}/drop.txt`]);
    expect(readDeep(repo.dir, deep, 'drop.txt')).toBe('gone\n');
    expect(readDeep(repo.dir, deep, 'add.txt')).toBe('new\n');

    const edit = files.find((f) => f.path === `${key}/edit.txt`)!;
    const patch = (await t.get(`${base}/files/${edit.id}`)).body.file.patch as string;
    const second = [...patch.matchAll(/^@@ [^@]+ @@/gm)][1]![0];
    const hunk = await revert(t, { hunks: [{ file_id: edit.id, hunk: second }] });
    expect(hunk.status).toBe(200);
    expect(readDeep(repo.dir, deep, 'edit.txt')).toBe(numbered(40, { 5: 'FIVE by the run' }));
  });
});
