import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTempDir } from '../test-support/index.ts';
import { closeRoot, openRoot, safeRoot } from './safe-read.ts';
import { permissionsFor, removeInside, writeInside } from './safe-write.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function dirs(): { root: string; outside: string } {
  const root = createTempDir('rundiff-write-');
  const outside = createTempDir('rundiff-write-outside-');
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  cleanups.push(() => fs.rmSync(outside, { recursive: true, force: true }));
  return { root, outside };
}

describe('writing inside a workspace', () => {
  it('writes a file with its mode, creating missing folders, and leaves no temp file', () => {
    const { root } = dirs();
    expect(
      writeInside(safeRoot(root), 'a/b/run.sh', { kind: 'file', bytes: Buffer.from('#!/bin/sh\n'), mode: '100755' }),
    ).toEqual({ ok: true });
    expect(fs.readFileSync(path.join(root, 'a/b/run.sh'), 'utf8')).toBe('#!/bin/sh\n');
    expect(fs.statSync(path.join(root, 'a/b/run.sh')).mode & 0o100).toBe(0o100);
    expect(fs.readdirSync(path.join(root, 'a/b'))).toEqual(['run.sh']);
  });

  it('writes exactly the permission bits asked for and creates folders with the mode asked for', () => {
    const { root } = dirs();
    const entry = { kind: 'file' as const, bytes: Buffer.from('{}'), mode: '100644', perm: 0o600 };
    expect(writeInside(safeRoot(root), 'kept/a.json', entry, { folderMode: 0o700 })).toEqual({ ok: true });
    expect(fs.statSync(path.join(root, 'kept/a.json')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(root, 'kept')).mode & 0o777).toBe(0o700);
  });

  it('refuses a folder on the way that is a symlink leading outside; a real folder there is written (control)', () => {
    const { root, outside } = dirs();
    fs.symlinkSync(outside, path.join(root, 'sub'));
    const refused = writeInside(safeRoot(root), 'sub/f.txt', { kind: 'file', bytes: Buffer.from('x'), mode: '100644' });
    expect(refused).toMatchObject({ ok: false, reason: 'outside_root' });
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(removeInside(safeRoot(root), 'sub/f.txt')).toMatchObject({ ok: false, reason: 'outside_root' });

    fs.rmSync(path.join(root, 'sub'));
    fs.mkdirSync(path.join(root, 'sub'));
    expect(writeInside(safeRoot(root), 'sub/f.txt', { kind: 'file', bytes: Buffer.from('x'), mode: '100644' })).toEqual(
      {
        ok: true,
      },
    );
    expect(fs.readFileSync(path.join(root, 'sub/f.txt'), 'utf8')).toBe('x');
  });

  it('replaces a symlink standing at the name instead of writing through it', () => {
    const { root, outside } = dirs();
    fs.writeFileSync(path.join(outside, 'target.txt'), 'outside\n');
    fs.symlinkSync(path.join(outside, 'target.txt'), path.join(root, 'f.txt'));
    expect(
      writeInside(safeRoot(root), 'f.txt', { kind: 'file', bytes: Buffer.from('inside\n'), mode: '100644' }),
    ).toEqual({ ok: true });
    expect(fs.lstatSync(path.join(root, 'f.txt')).isFile()).toBe(true);
    expect(fs.readFileSync(path.join(outside, 'target.txt'), 'utf8')).toBe('outside\n');
  });

  it('writes a symlink as a link, removes files, and refuses names that leave the root', () => {
    const { root } = dirs();
    expect(writeInside(safeRoot(root), 'l', { kind: 'symlink', target: Buffer.from('elsewhere') })).toEqual({
      ok: true,
    });
    expect(fs.readlinkSync(path.join(root, 'l'))).toBe('elsewhere');
    expect(removeInside(safeRoot(root), 'l')).toEqual({ ok: true });
    expect(fs.existsSync(path.join(root, 'l'))).toBe(false);
    expect(removeInside(safeRoot(root), 'never/was.txt')).toEqual({ ok: true });
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', ''])
      expect(writeInside(safeRoot(root), bad, { kind: 'file', bytes: Buffer.from('x'), mode: '100644' })).toMatchObject(
        {
          ok: false,
          reason: 'outside_root',
        },
      );
  });

  it('a root held open is written through its descriptor after a folder above it becomes a symlink (control: by name it lands outside)', () => {
    const { root: base, outside } = dirs();
    const ws = path.join(base, 'p', 'ws');
    fs.mkdirSync(ws, { recursive: true });
    fs.mkdirSync(path.join(outside, 'ws'));
    const held = openRoot(ws)!;
    expect(held).not.toBeNull();
    fs.renameSync(path.join(base, 'p'), path.join(base, 'p.real'));
    fs.symlinkSync(outside, path.join(base, 'p'));
    try {
      const file = { kind: 'file' as const, bytes: Buffer.from('x'), mode: '100644' };
      expect(writeInside(held, 'd/f.txt', file)).toEqual({ ok: true });
      expect(fs.readFileSync(path.join(base, 'p.real', 'ws', 'd', 'f.txt'), 'utf8')).toBe('x');
      expect(removeInside(held, 'd/f.txt')).toEqual({ ok: true });
      expect(fs.readdirSync(path.join(outside, 'ws'))).toEqual([]);
      // Opened now, the same path is another folder: refused.
      expect(openRoot(ws)).toBeNull();
      // Positive control: a root resolved by name now follows the link and writes outside.
      expect(writeInside(safeRoot(ws), 'f.txt', file)).toEqual({ ok: true });
      expect(fs.readdirSync(path.join(outside, 'ws'))).toEqual(['f.txt']);
    } finally {
      closeRoot(held);
    }
  });

  it('a replaced file keeps its permission bits; only the executable bits follow the mode restored', () => {
    const { root } = dirs();
    const me = { uid: process.getuid!(), gid: process.getgid!() };
    const write = (mode: string, perm: number) => {
      writeInside(safeRoot(root), 'f', { kind: 'file', bytes: Buffer.from('x'), mode, keep: { perm, ...me } });
      return fs.statSync(path.join(root, 'f')).mode & 0o7777;
    };
    expect(write('100644', 0o600)).toBe(0o600);
    expect(write('100644', 0o700)).toBe(0o600);
    expect(write('100755', 0o640)).toBe(0o750);
    expect(write('100755', 0o4755)).toBe(0o755);
    expect(permissionsFor('100644', undefined)).toBe(0o644 & ~process.umask());
  });
});

describe("writing by the working folder (walk: 'cwd', a command on a system without /proc)", () => {
  const cwd = { walk: 'cwd' as const };
  const file = (text: string) => ({ kind: 'file' as const, bytes: Buffer.from(text), mode: '100644' });

  it('writes with its mode and folder mode, creating missing folders, leaves no temp file, and goes back', () => {
    const { root } = dirs();
    const before = process.cwd();
    // Observed, not replaced: the walk really moves the working folder (and only with `walk: 'cwd'`).
    const chdir = vi.spyOn(process, 'chdir');
    cleanups.push(() => chdir.mockRestore());
    writeInside(safeRoot(root), 'by-descriptor.txt', file('x'));
    expect(chdir).not.toHaveBeenCalled();
    const entry = { ...file('{}'), perm: 0o600 };
    expect(writeInside(safeRoot(root), 'a/b/settings.json', entry, { ...cwd, folderMode: 0o700 })).toEqual({
      ok: true,
    });
    expect(process.cwd()).toBe(before);
    expect(fs.readFileSync(path.join(root, 'a/b/settings.json'), 'utf8')).toBe('{}');
    expect(fs.statSync(path.join(root, 'a/b/settings.json')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(root, 'a')).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(path.join(root, 'a/b'))).toEqual(['settings.json']);
    expect(chdir.mock.calls.map(([to]) => to)).toEqual([root, './a', './b', before]);
    expect(removeInside(safeRoot(root), 'a/b/settings.json', cwd)).toEqual({ ok: true });
    expect(fs.readdirSync(path.join(root, 'a/b'))).toEqual([]);
    expect(process.cwd()).toBe(before);
  });

  it('refuses a folder on the way that is a symlink leading outside, and goes back; a real folder is written (control)', () => {
    const { root, outside } = dirs();
    const before = process.cwd();
    fs.symlinkSync(outside, path.join(root, 'sub'));
    expect(writeInside(safeRoot(root), 'sub/f.txt', file('x'), cwd)).toMatchObject({
      ok: false,
      reason: 'outside_root',
    });
    expect(removeInside(safeRoot(root), 'sub/f.txt', cwd)).toMatchObject({ ok: false, reason: 'outside_root' });
    expect(fs.readdirSync(outside)).toEqual([]);
    expect(process.cwd()).toBe(before);
    fs.rmSync(path.join(root, 'sub'));
    fs.mkdirSync(path.join(root, 'sub'));
    expect(writeInside(safeRoot(root), 'sub/f.txt', file('x'), cwd)).toEqual({ ok: true });
    expect(fs.readFileSync(path.join(root, 'sub/f.txt'), 'utf8')).toBe('x');
  });

  it('replaces a symlink at the name instead of writing through it, and refuses names that leave the root', () => {
    const { root, outside } = dirs();
    fs.writeFileSync(path.join(outside, 'target.txt'), 'outside\n');
    fs.symlinkSync(path.join(outside, 'target.txt'), path.join(root, 'f.txt'));
    expect(writeInside(safeRoot(root), 'f.txt', file('inside\n'), cwd)).toEqual({ ok: true });
    expect(fs.lstatSync(path.join(root, 'f.txt')).isFile()).toBe(true);
    expect(fs.readFileSync(path.join(outside, 'target.txt'), 'utf8')).toBe('outside\n');
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', ''])
      expect(writeInside(safeRoot(root), bad, file('x'), cwd)).toMatchObject({ ok: false, reason: 'outside_root' });
  });

  it('a root that now leads elsewhere is refused: the folder entered must be the root the caller checked', () => {
    const { root: base, outside } = dirs();
    const ws = path.join(base, 'ws');
    fs.mkdirSync(ws);
    const root = safeRoot(ws);
    fs.renameSync(ws, path.join(base, 'moved'));
    fs.symlinkSync(outside, ws);
    expect(writeInside(root, 'f.txt', file('x'), cwd)).toMatchObject({ ok: false, reason: 'outside_root' });
    expect(fs.readdirSync(outside)).toEqual([]);
    // Control: the same write by the descriptor walk refuses it too.
    expect(writeInside(root, 'f.txt', file('x'))).toMatchObject({ ok: false });
  });
});
