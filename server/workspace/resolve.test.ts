import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir, createTempRepo, withoutPermissionOverride } from '../test-support/index.ts';
import {
  ownFilesUnder,
  parseMountInfo,
  pseudoFsName,
  pseudoFsRefusal,
  pseudoMountsBelow,
  resolveWorkspace,
  type WorkspacePolicy,
} from './index.ts';

/**
 * `resolveWorkspace(dir)` in a child process that cannot override file permissions (as root:
 * without CAP_DAC_OVERRIDE, see `withoutPermissionOverride`); its answer. A child under another uid
 * would fail wherever the checkout itself is not readable by that user.
 */
async function resolveWithoutOverride(dir: string): Promise<unknown> {
  const module = pathToFileURL(path.join(import.meta.dirname, 'resolve.ts')).href;
  const script =
    `const { resolveWorkspace } = await import(${JSON.stringify(module)});` +
    `const r = await resolveWorkspace(process.argv[1], { workspaceRoots: null, homeDir: '/nonexistent' });` +
    `process.stdout.write(JSON.stringify(r));`;
  const [cmd, args] = withoutPermissionOverride(process.execPath, [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    script,
    dir,
  ]);
  const { stdout } = await promisify(execFile)(cmd, args, {
    cwd: path.join(import.meta.dirname, '..', '..'),
    encoding: 'utf8',
  });
  return JSON.parse(stdout) as unknown;
}

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
    // Control: root reads everything, so this process resolves the locked folder.
    expect(await resolveWorkspace(locked, open)).toMatchObject({ ok: true });
    // The check without the power to override permissions runs in a child process: this process
    // never changes its own privileges, so nothing else it runs meanwhile is affected.
    expect(await resolveWithoutOverride(locked)).toMatchObject({ ok: false, reason: 'workspace_unreadable' });
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

describe('kernel and device file systems are never workspaces', () => {
  const realDir = (p: string): boolean => {
    try {
      return fs.statSync(p).isDirectory();
    } catch {
      return false;
    }
  };

  it('refuses /proc, /sys, /dev and folders below them, naming the file-system type', async () => {
    const cases: [string, RegExp][] = [
      ['/proc', /\bproc\b/],
      ['/proc/self/fd', /\bproc\b/],
      ['/sys', /\bsysfs\b/],
      ['/sys/fs/cgroup', /\bsysfs\b|\bcgroup/],
      ['/dev', /\bdevtmpfs\b/],
      ['/dev/pts', /\bdevtmpfs\b|\bdevpts\b/],
    ];
    let checked = 0;
    for (const [dir, named] of cases) {
      if (!realDir(dir)) continue;
      const r = await resolveWorkspace(dir, open);
      expect(r, dir).toMatchObject({ ok: false, reason: 'workspace_not_allowed' });
      expect(r.ok ? '' : r.message, dir).toMatch(named);
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('the same folders are accepted by everything else resolution checks (control: only the file-system type refuses them)', () => {
    // refusalFor without the file-system check would allow /proc: it is neither / nor home nor outside the roots.
    expect(pseudoFsName(0x9fa0, null)).toBe('proc');
    expect(pseudoFsRefusal('/proc', [])).toMatch(/proc/);
    expect(realDir('/proc') ? fs.statfsSync('/proc').type : 0x9fa0).toBe(0x9fa0);
  });

  it('tmpfs and ordinary disks are allowed; devtmpfs is told apart from tmpfs by the mount table', () => {
    expect(pseudoFsName(0x01021994, 'tmpfs')).toBeNull();
    expect(pseudoFsName(0x01021994, null)).toBeNull();
    expect(pseudoFsName(0xef53, 'ext4')).toBeNull();
    expect(pseudoFsName(0x01021994, 'devtmpfs')).toBe('devtmpfs');
    const mounts = parseMountInfo(
      [
        '22 27 0:21 / /proc rw,relatime - proc proc rw',
        '24 27 0:6 / /dev rw,relatime - devtmpfs devtmpfs rw,mode=755',
        '30 27 0:40 / /mnt/my\\040ram rw,relatime - tmpfs tmpfs rw',
        '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
      ].join('\n'),
    );
    expect(mounts).toContainEqual({ mountPoint: '/mnt/my ram', fsType: 'tmpfs' });
    expect(pseudoFsRefusal('/dev/shm/x', mounts)).toMatch(/devtmpfs/);
    expect(pseudoFsRefusal('/developer', mounts)).toBeNull();
  });

  it('kernel file systems mounted inside a workspace are listed so the walk never enters them', () => {
    const mounts = parseMountInfo(
      [
        '27 1 254:0 / / rw - ext4 /dev/vda rw',
        '40 27 0:50 / /srv/box/proc rw - proc proc rw',
        '41 27 0:51 / /srv/box/sys rw - sysfs sysfs rw',
        '42 27 0:52 / /srv/box/run rw - tmpfs tmpfs rw',
        '43 27 0:53 / /srv/boxes/proc rw - proc proc rw',
      ].join('\n'),
    );
    expect(pseudoMountsBelow('/srv/box', mounts)).toEqual(['proc', 'sys']);
    expect(pseudoMountsBelow('/srv/box/run', mounts)).toEqual([]);
  });

  it('a temporary folder (tmpfs or disk) is still tracked', async () => {
    const d = temp();
    expect(await resolveWorkspace(d, open)).toMatchObject({ ok: true });
  });
});
