import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir, createTempRepo } from '../test-support/index.ts';
import { ownFilesUnder, resolveWorkspace, type WorkspacePolicy } from './index.ts';

const open: WorkspacePolicy = { workspaceRoots: null, homeDir: os.homedir() };
const dirs: string[] = [];
const temp = () => {
  const d = createTempDir();
  dirs.push(d);
  return d;
};
afterEach(() => {
  while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
});

describe('workspace resolution', () => {
  it('no_workspace when none is named', async () => {
    expect(await resolveWorkspace(undefined, open)).toMatchObject({ ok: false, reason: 'no_workspace' });
    expect(await resolveWorkspace('', open)).toMatchObject({ ok: false, reason: 'no_workspace' });
  });

  it('workspace_missing for a folder that does not exist', async () => {
    const d = temp();
    expect(await resolveWorkspace(path.join(d, 'gone'), open)).toMatchObject({
      ok: false,
      reason: 'workspace_missing',
    });
  });

  it('workspace_not_directory for a file', async () => {
    const d = temp();
    fs.writeFileSync(path.join(d, 'f'), 'x');
    expect(await resolveWorkspace(path.join(d, 'f'), open)).toMatchObject({
      ok: false,
      reason: 'workspace_not_directory',
    });
  });

  it('B28: workspace_not_allowed for /, the home folder itself, and folders outside RUNDIFF_WORKSPACE_ROOTS', async () => {
    const home = temp();
    expect(await resolveWorkspace('/', open)).toMatchObject({ ok: false, reason: 'workspace_not_allowed' });
    expect(await resolveWorkspace(home, { workspaceRoots: null, homeDir: home })).toMatchObject({
      ok: false,
      reason: 'workspace_not_allowed',
    });
    fs.mkdirSync(path.join(home, 'project'));
    expect(await resolveWorkspace(path.join(home, 'project'), { workspaceRoots: null, homeDir: home })).toMatchObject({
      ok: true,
    });
    const root = temp();
    const outside = temp();
    fs.mkdirSync(path.join(root, 'inside'));
    const policy = { workspaceRoots: [root], homeDir: home };
    expect(await resolveWorkspace(path.join(root, 'inside'), policy)).toMatchObject({ ok: true });
    expect(await resolveWorkspace(outside, policy)).toMatchObject({ ok: false, reason: 'workspace_not_allowed' });
    // A symlink inside the root that points outside is judged by where it leads.
    fs.symlinkSync(outside, path.join(root, 'escape'));
    expect(await resolveWorkspace(path.join(root, 'escape'), policy)).toMatchObject({
      ok: false,
      reason: 'workspace_not_allowed',
    });
  });

  it('workspace_unreadable for a folder the server may not read', async () => {
    const d = temp();
    fs.chmodSync(d, 0o755);
    const locked = path.join(d, 'locked');
    fs.mkdirSync(locked, { mode: 0o000 });
    fs.chmodSync(locked, 0o000);
    if (process.getuid?.() !== 0) {
      expect(await resolveWorkspace(locked, open)).toMatchObject({ ok: false, reason: 'workspace_unreadable' });
      return;
    }
    // root reads everything: check as an unprivileged user by switching the effective uid of this
    // test process for the call (file access checks follow it), then switching back.
    process.setegid!(65534);
    process.seteuid!(65534);
    let result;
    try {
      result = await resolveWorkspace(locked, { workspaceRoots: null, homeDir: '/nonexistent' });
    } finally {
      process.seteuid!(0);
      process.setegid!(0);
    }
    expect(result).toMatchObject({ ok: false, reason: 'workspace_unreadable' });
  });

  it('B13: the root is the realpath of the folder named; kinds are git and filesystem', async () => {
    const plain = temp();
    const link = path.join(temp(), 'link');
    fs.symlinkSync(plain, link);
    expect(await resolveWorkspace(link, open)).toEqual({ ok: true, root: plain, kind: 'filesystem', repo: null });
    const repo = createTempRepo({ files: { 'pkg/a.txt': 'a\n' } });
    dirs.push(repo.dir);
    const sub = await resolveWorkspace(path.join(repo.dir, 'pkg'), open);
    expect(sub).toMatchObject({
      ok: true,
      root: path.join(repo.dir, 'pkg'),
      kind: 'git',
      repo: { topLevel: repo.dir, prefix: 'pkg' },
    });
  });

  it("the server's own database files inside a workspace are listed for exclusion", () => {
    const d = temp();
    expect(ownFilesUnder(d, path.join(d, 'data', 'rundiff.db'))).toEqual([
      'data/rundiff.db',
      'data/rundiff.db-wal',
      'data/rundiff.db-shm',
      'data/rundiff.db-journal',
    ]);
    expect(ownFilesUnder(path.join(d, 'ws'), path.join(d, 'rundiff.db'))).toEqual([]);
    expect(ownFilesUnder(d, ':memory:')).toEqual([]);
  });
});
