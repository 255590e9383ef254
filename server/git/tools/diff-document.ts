import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { GitDiffFile, GitDiffOmitted, GitDiffOmittedReason } from '../../../shared/index.ts';
import { AppError } from '../../errors.ts';
import { comparePathKeys, displayPath, keyFromBytes, keyToBytes, splitNul, type PathKey } from '../../paths/index.ts';
import { openInside, pathBelow, readInside, safeRoot } from '../../fs/index.ts';
import { checkAttrs, isBinaryByAttrs } from '../repo.ts';
import { runGit, type GitConfigPair } from '../runner.ts';
import { parseDiffOutput, stanzaNewOid } from './diff-parse.ts';
import { blobOid, countLines, looksBinary, newFileStanza } from './new-file-patch.ts';
import { cutPage, type PageCut } from './paging.ts';
import { gitFileMode, type ModeRule, type ObjectFormat } from './repo-state.ts';
import { excludePathspec } from './paths.ts';
import { withPrivateIndex } from './private-index.ts';
import { DIFF_FLAGS } from './safety.ts';

/**
 * One diff as a document: every changed file (the list is always complete) and the whole patch text,
 * git's stanzas plus new-file stanzas for untracked files, in path order. Pages are byte slices of it.
 */

/** The most patch text one diff holds; files past it are listed but `too_large`. */
export const MAX_DIFF_TEXT_BYTES = 16 * 1024 * 1024;
/** Untracked file content read per diff, at most. */
const MAX_UNTRACKED_READ_BYTES = 64 * 1024 * 1024;

export interface DocFile {
  path: PathKey;
  oldPath: PathKey | null;
  additions: number;
  deletions: number;
  binary: boolean;
  /** Byte range of the file's stanza in the document text, or null when it is not in the text. */
  range: { start: number; end: number } | null;
  omitted: GitDiffOmittedReason | null;
  /** Work-tree mode and content the stanza showed (`<mode> <blob id>` or `absent`), for diffs whose new side is the work tree. */
  shownWorktree: string | null;
}

export interface DiffDocument {
  files: DocFile[];
  text: Buffer;
  stanzaStarts: number[];
  /** Identifies this exact diff (text and list): a later page only continues the same document. */
  hash: string;
}

export interface CollectOptions {
  top: string;
  config: readonly GitConfigPair[];
  /** Arguments between `diff` and `--`: `--cached`, object ids. */
  revArgs: readonly string[];
  pathspec: readonly string[];
  /** Add untracked, non-ignored files as new files (the new side is the work tree). */
  untracked: boolean;
  /** The new side is the work tree (record what each stanza showed of it). */
  worktreeSide: boolean;
  format: ObjectFormat;
  /** The git dir holding the index (a linked worktree's own). */
  gitDir: string;
  /** How file permissions become git modes (`core.fileMode`). */
  modeRule?: ModeRule;
}

interface Part {
  file: DocFile;
  stanza: Buffer | null;
}

/**
 * Tracked files git could not read from the work tree: a permission-denied file, or a FIFO, socket
 * or device where a file was. git fails the whole diff on one of them ("cannot hash"), so they are
 * found first, among the files whose stat data differs from the index (the only ones git reads),
 * and left out of git's pathspec. Each is probed with the safe open, which never blocks.
 */
async function unreadableTracked(
  opts: CollectOptions,
  env: Record<string, string>,
): Promise<{ candidates: PathKey[]; unreadable: PathKey[] }> {
  const res = await runGit({
    cwd: opts.top,
    args: ['diff-files', '-z', '--name-only', '--', ...opts.pathspec],
    config: opts.config,
    env,
    timeoutMs: 30_000,
  });
  const root = safeRoot(opts.top);
  const candidates = splitNul(res.stdout).map(keyFromBytes);
  const unreadable: PathKey[] = [];
  for (const key of candidates) {
    const opened = openInside(root, key);
    if (opened.kind === 'file') fs.closeSync(opened.fd);
    if (opened.kind !== 'unreadable' || opened.reason === 'outside_root') continue;
    // A folder where a file was is a deletion git shows itself.
    if (opened.reason === 'not_regular' && isDirectory(pathBelow(opts.top, key))) continue;
    unreadable.push(key);
  }
  return { candidates, unreadable };
}

/** The candidate git named in a "cannot hash <path>" failure (a file that changed under it). */
function namedInFailure(stderr: string, candidates: readonly PathKey[]): PathKey | null {
  const m = /(?:cannot|unable to) hash (.+)$/m.exec(stderr);
  if (!m) return null;
  return candidates.find((c) => keyToBytes(c).toString('utf8') === m[1]) ?? null;
}

function isDirectory(abs: string | Buffer): boolean {
  try {
    return fs.lstatSync(abs).isDirectory();
  } catch {
    return false;
  }
}

/** git's complaint when it cannot read a tracked work-tree file. */
const UNREADABLE_STDERR =
  /cannot hash|unable to hash|unsupported file type|Permission denied|failed to read|unable to read/i;

async function trackedParts(opts: CollectOptions): Promise<Part[]> {
  const diff = (env: Record<string, string>, skip: readonly PathKey[]) =>
    runGit({
      cwd: opts.top,
      args: [
        'diff',
        ...DIFF_FLAGS,
        // Whole object ids in the raw records: a mode-only stanza has no index line, and what it
        // showed of the work tree is then the raw record's blob id, compared with the file's.
        '--no-abbrev',
        '--raw',
        '--numstat',
        '-p',
        '-z',
        ...opts.revArgs,
        '--',
        ...opts.pathspec,
        ...skip.map(excludePathspec),
      ],
      config: opts.config,
      env,
      // The raw and numstat records come first, so the file list is complete even when the patch is cut.
      maxStdoutBytes: MAX_DIFF_TEXT_BYTES + 8 * 1024 * 1024,
      timeoutMs: 30_000,
    });
  let skipped: PathKey[] = [];
  const res = !opts.worktreeSide
    ? await diff({}, [])
    : await withPrivateIndex(opts.gitDir, async (env) => {
        // A file can change kind between the probe and git's read (git then fails on it): the
        // file git names is left out as well, and the diff retried a bounded number of times.
        const changing = new Set<PathKey>();
        for (let attempt = 1; ; attempt++) {
          const probe = await unreadableTracked(opts, env);
          skipped = [...new Set([...probe.unreadable, ...changing])];
          try {
            return await diff(env, skipped);
          } catch (err) {
            const said = err instanceof AppError ? err.details?.stderr : undefined;
            const stderr = typeof said === 'string' ? said : '';
            if (attempt >= 5 || !UNREADABLE_STDERR.test(stderr)) throw err;
            const named = namedInFailure(stderr, probe.candidates);
            if (named !== null) changing.add(named);
          }
        }
      });
  const parsed = parseDiffOutput(res.stdout, res.stdoutTruncated);
  const parts: Part[] = parsed.entries.map((e) => {
    const stanza = e.stanza ? parsed.patch.subarray(e.stanza.start, e.stanza.end) : null;
    let shown: string | null = null;
    if (opts.worktreeSide && stanza) {
      if (e.status === 'D') shown = 'absent';
      else {
        const oid = stanzaNewOid(stanza) ?? (e.oldOid && !/^0+$/.test(e.oldOid) ? e.oldOid : null);
        shown = oid === null ? null : `${e.newMode} ${oid}`;
      }
    }
    return {
      file: {
        path: e.path,
        oldPath: e.oldPath,
        additions: e.additions,
        deletions: e.deletions,
        binary: e.binary,
        range: null,
        omitted: stanza ? null : 'too_large',
        shownWorktree: shown,
      },
      stanza,
    };
  });
  const listed = new Set(parts.map((p) => p.file.path));
  for (const key of skipped) {
    if (listed.has(key)) continue;
    parts.push({
      file: { ...emptyDocFile(key), omitted: 'unreadable' },
      stanza: null,
    });
  }
  return parts;
}

/** A file of the document with nothing shown yet: no counts, no patch, nothing omitted. */
function emptyDocFile(key: PathKey): DocFile {
  return {
    path: key,
    oldPath: null,
    additions: 0,
    deletions: 0,
    binary: false,
    range: null,
    omitted: null,
    shownWorktree: null,
  };
}

async function untrackedParts(opts: CollectOptions): Promise<Part[]> {
  const res = await runGit({
    cwd: opts.top,
    args: ['ls-files', '--others', '--exclude-standard', '-z', '--', ...opts.pathspec],
    config: opts.config,
  });
  const keys = splitNul(res.stdout).map(keyFromBytes);
  const files = keys.filter((k) => !k.endsWith('/'));
  const attrs = await checkAttrs(opts.top, files, ['binary', 'diff']);
  let budget = MAX_UNTRACKED_READ_BYTES;
  const root = safeRoot(opts.top);
  const parts: Part[] = [];
  for (const key of keys) {
    const base = emptyDocFile(key);
    if (key.endsWith('/')) {
      // git lists an untracked folder holding its own repository as `dir/`.
      parts.push({ file: { ...base, path: key.slice(0, -1), omitted: 'nested_repository' }, stanza: null });
      continue;
    }
    // Opened without following a link or waiting on a FIFO, and only below the top level: a file
    // swapped for a link to something outside is shown as the link it is, never as its target.
    const entry = readInside(root, key, Math.min(budget, MAX_DIFF_TEXT_BYTES));
    if (entry.kind === 'too_large') {
      parts.push({ file: { ...base, omitted: 'too_large' }, stanza: null });
      continue;
    }
    if (entry.kind !== 'file' && entry.kind !== 'symlink') {
      parts.push({ file: { ...base, omitted: 'unreadable' }, stanza: null });
      continue;
    }
    const link = entry.kind === 'symlink';
    const content = link ? entry.target : entry.bytes;
    const mode = link ? '120000' : gitFileMode(entry.mode, key, opts.modeRule);
    budget -= content.length;
    const binary = !link && (looksBinary(content) || isBinaryByAttrs(attrs.get(key)));
    const oid = blobOid(content, opts.format);
    const stanza = newFileStanza({ path: key, mode, oid, content, binary });
    parts.push({
      file: { ...base, additions: binary ? 0 : countLines(content), binary, shownWorktree: `${mode} ${oid}` },
      stanza,
    });
  }
  return parts;
}

export async function collectDiff(opts: CollectOptions): Promise<DiffDocument> {
  const parts = await trackedParts(opts);
  if (opts.untracked) {
    const tracked = new Set(parts.map((p) => p.file.path));
    for (const u of await untrackedParts(opts)) if (!tracked.has(u.file.path)) parts.push(u);
  }
  parts.sort((a, b) => comparePathKeys(a.file.path, b.file.path));
  const chunks: Buffer[] = [];
  const starts: number[] = [];
  let size = 0;
  for (const part of parts) {
    if (!part.stanza) continue;
    if (size + part.stanza.length > MAX_DIFF_TEXT_BYTES) {
      part.file.omitted = 'too_large';
      continue;
    }
    part.file.range = { start: size, end: size + part.stanza.length };
    starts.push(size);
    chunks.push(part.stanza);
    size += part.stanza.length;
  }
  const text = Buffer.concat(chunks, size);
  const files = parts.map((p) => p.file);
  const hash = createHash('sha256')
    .update(text)
    .update(JSON.stringify(files.map((f) => [f.path, f.oldPath, f.additions, f.deletions, f.omitted])))
    .digest('hex');
  return { files, text, stanzaStarts: starts, hash };
}

export function toDiffFile(f: DocFile): GitDiffFile {
  const p = displayPath(f.path);
  const out: GitDiffFile = {
    path: p.path,
    old_path: null,
    additions: f.additions,
    deletions: f.deletions,
    binary: f.binary,
  };
  if (p.base64 !== undefined) out.path_base64 = p.base64;
  if (f.oldPath !== null) {
    const o = displayPath(f.oldPath);
    out.old_path = o.path;
    if (o.base64 !== undefined) out.old_path_base64 = o.base64;
  }
  return out;
}

export interface DiffPage {
  cut: PageCut;
  diff: string;
  omitted: GitDiffOmitted[];
  /** Files whose stanza ends inside this page: with the earlier pages of its chain, fully shown. */
  completed: DocFile[];
}

/** One page of a document: its text, and the files not (fully) shown by the end of it. */
export function pageOf(doc: DiffDocument, offset: number, maxBytes: number): DiffPage {
  const cut = cutPage(doc.text, doc.stanzaStarts, offset, maxBytes);
  const omitted: GitDiffOmitted[] = [];
  const completed: DocFile[] = [];
  for (const f of doc.files) {
    let reason: GitDiffOmittedReason | null = f.omitted;
    if (reason === null && f.range !== null) {
      if (f.range.end > cut.end) reason = 'budget';
      else if (f.range.end > cut.start) completed.push(f);
    }
    if (reason === null) continue;
    const p = displayPath(f.path);
    const o: GitDiffOmitted = { path: p.path, reason };
    if (p.base64 !== undefined) o.path_base64 = p.base64;
    omitted.push(o);
  }
  return { cut, diff: doc.text.subarray(cut.start, cut.end).toString('utf8'), omitted, completed };
}
