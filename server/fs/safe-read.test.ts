import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { asUnprivileged, deepFolders, inDeep, removeDeep } from '../test-support/index.ts';
import { keyFromText } from '../paths/index.ts';
import { openLongFolder } from './long-path.ts';
import {
  closeFolder,
  closeRoot,
  folderPlacedInside,
  openFolderInside,
  openInFolder,
  openRoot,
  readInside,
  safeRoot,
  type OpenResult,
} from './safe-read.ts';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A temp folder with `ws/` (the workspace) and `out/secret.txt` beside it. */
function layout() {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-safe-read-')));
  made.push(base);
  const ws = path.join(base, 'ws');
  fs.mkdirSync(path.join(ws, 'dir'), { recursive: true });
  fs.mkdirSync(path.join(base, 'out'));
  fs.writeFileSync(path.join(base, 'out', 'secret.txt'), 'secret\n');
  fs.writeFileSync(path.join(ws, 'a.txt'), 'hello\n');
  return { base, ws, root: safeRoot(ws) };
}

describe('readInside: the one way a workspace file is read', () => {
  it('reads a regular file below the root, by text and by non-UTF-8 byte names', () => {
    const { ws, root } = layout();
    expect(readInside(root, 'a.txt')).toMatchObject({ kind: 'file', bytes: Buffer.from('hello\n') });
    const odd = Buffer.from([0x6e, 0xff, 0x2e, 0x74]);
    fs.writeFileSync(Buffer.concat([Buffer.from(ws + '/'), odd]), 'x');
    expect(readInside(root, odd.toString('latin1'))).toMatchObject({ kind: 'file', bytes: Buffer.from('x') });
    expect(readInside(root, keyFromText('dir/ünïcode'))).toEqual({ kind: 'absent' });
  });

  it('gives a symlink its own text and never the bytes it points at', () => {
    const { base, ws, root } = layout();
    fs.symlinkSync(path.join(base, 'out', 'secret.txt'), path.join(ws, 'link'));
    // Positive control: reading by name follows the link and gets the secret.
    expect(fs.readFileSync(path.join(ws, 'link'), 'utf8')).toBe('secret\n');
    const r = readInside(root, 'link');
    expect(r.kind).toBe('symlink');
    expect(r.kind === 'symlink' && r.target.toString()).toBe(path.join(base, 'out', 'secret.txt'));
  });

  it('refuses a file reached through a folder that is a symlink to outside the root', () => {
    const { base, ws, root } = layout();
    fs.rmSync(path.join(ws, 'dir'), { recursive: true });
    fs.symlinkSync(path.join(base, 'out'), path.join(ws, 'dir'));
    expect(fs.readFileSync(path.join(ws, 'dir', 'secret.txt'), 'utf8')).toBe('secret\n'); // control
    expect(readInside(root, 'dir/secret.txt')).toEqual({ kind: 'unreadable', reason: 'outside_root' });
  });

  it('answers at once for a FIFO instead of waiting for a writer', () => {
    const { ws, root } = layout();
    execFileSync('mkfifo', [path.join(ws, 'pipe')]);
    expect(readInside(root, 'pipe')).toEqual({ kind: 'unreadable', reason: 'not_regular' });
  });

  it('says a folder is not a regular file and an over-size file is too large', () => {
    const { ws, root } = layout();
    expect(readInside(root, 'dir')).toEqual({ kind: 'unreadable', reason: 'not_regular' });
    fs.writeFileSync(path.join(ws, 'big'), Buffer.alloc(100));
    expect(readInside(root, 'big', 99)).toMatchObject({ kind: 'too_large', size: 100 });
    expect(readInside(root, 'big', 100)).toMatchObject({ kind: 'file' });
  });

  it('says a file without read permission is denied, not absent', () => {
    const { base, ws, root } = layout();
    fs.chmodSync(base, 0o755);
    fs.chmodSync(path.join(ws, 'a.txt'), 0);
    expect(asUnprivileged(() => readInside(root, 'a.txt'))).toMatchObject({ kind: 'unreadable', reason: 'denied' });
  });
});

describe('openFolderInside / openInFolder: a folder checked once, its files opened through it', () => {
  const readAll = (r: OpenResult): string => {
    if (r.kind !== 'file') return r.kind;
    try {
      return fs.readFileSync(r.fd, 'utf8');
    } finally {
      fs.closeSync(r.fd);
    }
  };

  it('keeps reading the folder it opened when the name is swapped for a symlink to outside afterwards', () => {
    const { base, ws, root } = layout();
    fs.writeFileSync(path.join(ws, 'dir', 'secret.txt'), 'inside\n');
    const folder = openFolderInside(root, 'dir');
    expect(folder).not.toBeNull();
    try {
      fs.renameSync(path.join(ws, 'dir'), path.join(ws, 'dir.old'));
      fs.symlinkSync(path.join(base, 'out'), path.join(ws, 'dir'));
      expect(fs.readFileSync(path.join(ws, 'dir', 'secret.txt'), 'utf8')).toBe('secret\n'); // control
      expect(readAll(openInFolder(folder!, 'secret.txt'))).toBe('inside\n');
    } finally {
      closeFolder(folder!);
    }
  });

  it('refuses a folder that is a symlink to outside (its files then go through openInside)', () => {
    const { base, ws, root } = layout();
    fs.rmSync(path.join(ws, 'dir'), { recursive: true });
    fs.symlinkSync(path.join(base, 'out'), path.join(ws, 'dir'));
    expect(openFolderInside(root, 'dir')).toBeNull();
    const inner = path.join(ws, 'inner');
    fs.mkdirSync(inner);
    fs.symlinkSync(path.join(base, 'out'), path.join(inner, 'via'));
    expect(openFolderInside(root, 'inner/via')).toBeNull();
  });

  it('never follows a final symlink, never waits on a FIFO, and says a missing name is absent', () => {
    const { base, ws, root } = layout();
    fs.symlinkSync(path.join(base, 'out', 'secret.txt'), path.join(ws, 'link'));
    execFileSync('mkfifo', [path.join(ws, 'pipe')]);
    const folder = openFolderInside(root, '')!;
    try {
      expect(readAll(openInFolder(folder, 'a.txt'))).toBe('hello\n');
      expect(openInFolder(folder, 'link')).toEqual({ kind: 'symlink' });
      expect(openInFolder(folder, 'pipe')).toEqual({ kind: 'unreadable', reason: 'not_regular' });
      expect(openInFolder(folder, 'dir')).toEqual({ kind: 'unreadable', reason: 'not_regular' });
      expect(openInFolder(folder, 'nope')).toEqual({ kind: 'absent' });
    } finally {
      closeFolder(folder);
    }
  });

  it('a folder too deep for the kernel to name is placed by its nearest ancestor it can name: inside the root yes, beside it no', () => {
    const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-deep-place-')));
    try {
      const folders = deepFolders('p', 4300);
      for (const side of ['ws', 'out']) {
        fs.mkdirSync(path.join(base, side));
        inDeep(path.join(base, side), folders, 'true');
      }
      const root = openRoot(path.join(base, 'ws'))!;
      const inside = openLongFolder(`${base}/ws/${folders.join('/')}`);
      const beside = openLongFolder(`${base}/out/${folders.join('/')}`);
      try {
        // The kernel cannot name either descriptor: the check climbs to an ancestor it can name.
        expect(() => fs.readlinkSync(`/proc/self/fd/${inside}`)).toThrow(/ENAMETOOLONG/);
        expect(folderPlacedInside(root, inside)).toBe(true);
        expect(folderPlacedInside(root, beside)).toBe(false);
      } finally {
        fs.closeSync(inside);
        fs.closeSync(beside);
        closeRoot(root);
      }
    } finally {
      removeDeep(base);
    }
  });
});
