import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../../errors.ts';
import {
  COMMAND_WALK,
  readInside,
  removeEmptyFolderInside,
  removeInside,
  safeRoot,
  writeInside,
  type SafeRoot,
} from '../../fs/index.ts';

/**
 * Every file an installer reads, writes or removes (settings, plugin, hook executables, the Hermes
 * config, the backups), named as a path below the folder it belongs to: the workspace for a
 * project's files, the home folder for the user's, the data folder for the backups. The project
 * may be hostile (any name in it may be a symlink to anywhere, a FIFO, a planted temp name), so:
 *
 * - the path is resolved once, links and all; a link (the file itself or a folder on the way)
 *   that stays below the root is followed, and the link is kept: a dotfiles link is written
 *   through; one that leads out of the root is refused, naming where it leads, and nothing is read
 *   from it, copied or written;
 * - the resolved path is then read and written only through `fs/` (`readInside`, `writeInside`,
 *   `removeInside`): opened without following links or blocking, folder by folder, only a regular
 *   file read, written to a fresh temp file (`O_EXCL|O_NOFOLLOW`, random name) in its checked
 *   folder and renamed over the name; a failure removes the temp file. Where there is no
 *   `/proc/self/fd` (macOS), the command's working folder walks down instead, each folder checked
 *   to be the one opened without following a link (`WriteOptions.walk`).
 */
export interface HookPath {
  /** The folder the file must stay below (workspace, home or data folder). */
  root: string;
  /** The file's absolute path as the person knows it (shown in messages). */
  file: string;
}

export const below = (root: string, ...parts: string[]): HookPath => ({ root, file: path.join(root, ...parts) });

const MAX_LINKS = 40;

/** The path with every link resolved; missing names are kept as they are below the deepest that exists. */
function resolved(p: string, links = 0): string {
  try {
    return fs.realpathSync(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  let st: fs.Stats | null = null;
  try {
    st = fs.lstatSync(p);
  } catch {
    // missing (or a file on the way): kept by name below its parent
  }
  if (st?.isSymbolicLink() && links < MAX_LINKS) {
    // A dangling link: where it points, resolved the same way.
    return resolved(path.resolve(parent, fs.readlinkSync(p)), links + 1);
  }
  return path.join(resolved(parent, links), path.basename(p));
}

interface Located {
  root: SafeRoot;
  key: string;
}

const what = (root: string) => `the folder it belongs in (${root})`;

/** Where `p` really is, as a key below its root; refused when a link leads it out of the root. */
function locate(p: HookPath, create: boolean): Located | null {
  if (create) fs.mkdirSync(p.root, { recursive: true });
  else if (!fs.existsSync(p.root)) return null;
  const root = safeRoot(p.root);
  const real = resolved(p.file);
  const prefix = root.realPrefix.toString('utf8');
  if (!real.startsWith(prefix) || real.length === prefix.length) {
    const lexical = path.relative(p.root, p.file);
    const leaves = lexical.startsWith('..') || path.isAbsolute(lexical);
    throw new AppError(
      'invalid_input',
      leaves
        ? `${p.file} is not below ${p.root}; left unchanged`
        : `${p.file} leads through a symbolic link to ${real}, outside ${what(p.root)}; nothing was read or written`,
      {
        hint: 'rundiff follows only links that stay inside that folder: edit the file the link names by hand, or replace the link with a file',
      },
    );
  }
  return { root, key: real.slice(prefix.length) };
}

function refused(p: HookPath, message: string): AppError {
  return new AppError('invalid_input', `${p.file}: ${message}; left unchanged`);
}

/** The file's text and permission bits, or null when it does not exist. Only a regular file is read. */
export function readHookFile(p: HookPath): { text: string; perm: number } | null {
  const at = locate(p, false);
  if (at === null) return null;
  const read = readInside(at.root, at.key);
  if (read.kind === 'absent') return null;
  if (read.kind === 'file') return { text: read.bytes.toString('utf8'), perm: read.mode & 0o777 };
  if (read.kind === 'unreadable' && read.reason === 'not_regular')
    throw refused(p, 'not a regular file (a FIFO, socket, device or folder stands there)');
  if (read.kind === 'symlink') throw refused(p, 'it was replaced by a symbolic link while it was read');
  throw refused(p, `cannot be read (${read.kind === 'unreadable' ? (read.code ?? read.reason) : read.kind})`);
}

export const readHookText = (p: HookPath): string | null => readHookFile(p)?.text ?? null;

/**
 * Leaves `text` at the file, atomically, keeping an existing file's permission bits unless `perm`
 * is given (new files get 0644, or `perm`). Missing folders are created (with `folderMode`).
 */
export function writeHookFile(p: HookPath, text: string, opts: { perm?: number; folderMode?: number } = {}): void {
  const at = locate(p, true)!;
  let perm = opts.perm;
  if (perm === undefined) {
    const old = readInside(at.root, at.key, 0);
    perm = old.kind === 'file' || old.kind === 'too_large' ? old.mode & 0o777 : 0o644;
  }
  const done = writeInside(
    at.root,
    at.key,
    { kind: 'file', bytes: Buffer.from(text, 'utf8'), mode: '100644', perm },
    { walk: COMMAND_WALK, ...(opts.folderMode !== undefined ? { folderMode: opts.folderMode } : {}) },
  );
  if (!done.ok) throw refused(p, done.message);
}

/** Removes the file (absent is fine). */
export function removeHookFile(p: HookPath): void {
  const at = locate(p, false);
  if (at === null) return;
  const done = removeInside(at.root, at.key, { walk: COMMAND_WALK });
  if (!done.ok) throw refused(p, done.message);
}

/** Removes the folder if it is empty; true when it went. A folder that holds anything is left. */
export function removeEmptyHookFolder(p: HookPath): boolean {
  const at = locate(p, false);
  if (at === null) return false;
  const done = removeEmptyFolderInside(at.root, at.key, { walk: COMMAND_WALK });
  if (!done.ok) throw refused(p, done.message);
  return 'removed' in done && done.removed;
}

/** Whether a real folder (not a link) stands at the path now. */
export function isHookFolder(p: HookPath): boolean {
  try {
    return fs.lstatSync(p.file).isDirectory();
  } catch {
    return false;
  }
}
