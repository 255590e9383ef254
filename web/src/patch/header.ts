import type { ChangeType } from '../../../shared/index.ts';
import type { PatchLine } from './lines.ts';

/** What a file patch's git header lines say, read once so the view can show words instead. */
export interface HeaderFacts {
  /** git's octal mode of each side (`100644`, `100755`, `120000`), null when the header does not say. */
  oldMode: string | null;
  newMode: string | null;
  /** Similarity of a rename in percent, or null. */
  similarity: number | null;
  /** The patch has at least one hunk (content changed). */
  hasHunks: boolean;
  /** git said the content is binary (`Binary files ... differ`, or a `GIT binary patch`). */
  binary: boolean;
}

const SYMLINK = '120000';

/**
 * Reads the header lines of a one-file patch. A type change (a symlink that became a file) is
 * stored as a delete stanza and a create stanza: the first header gives the old mode, the second
 * the new one.
 */
export function readHeader(lines: readonly PatchLine[]): HeaderFacts {
  const facts: HeaderFacts = { oldMode: null, newMode: null, similarity: null, hasHunks: false, binary: false };
  for (const { kind, text } of lines) {
    if (kind === 'hunk') facts.hasHunks = true;
    if (kind !== 'meta') continue;
    let m: RegExpExecArray | null;
    if ((m = /^(?:old mode|deleted file mode) (\d+)$/.exec(text))) facts.oldMode = m[1]!;
    else if ((m = /^(?:new mode|new file mode) (\d+)$/.exec(text))) facts.newMode = m[1]!;
    else if ((m = /^similarity index (\d+)%$/.exec(text))) facts.similarity = Number(m[1]);
    else if (/^Binary files .* differ$/.test(text) || text === 'GIT binary patch') facts.binary = true;
    else if ((m = /^index [0-9a-f]+\.\.[0-9a-f]+ (\d+)$/.exec(text))) {
      // Same mode on both sides: git writes it once, on the index line.
      facts.oldMode ??= m[1]!;
      facts.newMode ??= m[1]!;
    }
  }
  return facts;
}

/** `100755` -> `755`; other modes stay whole. */
const shortMode = (mode: string) => (mode.startsWith('100') ? mode.slice(3) : mode);

/** The text of a symlink's target on one side, from its one-line content in the patch. */
function linkTarget(lines: readonly PatchLine[], side: 'del' | 'add'): string | null {
  const line = lines.find((l) => l.kind === side);
  return line ? line.text.slice(1) : null;
}

export interface HeaderFile {
  change_type: ChangeType;
  old_path: string | null;
}

/**
 * Plain sentences for what the hidden header lines say: `renamed without changes`,
 * `mode 644 -> 755`, `symlink -> target`. Empty when the hunks tell the whole story.
 */
export function headerLabels(file: HeaderFile, lines: readonly PatchLine[]): string[] {
  const facts = readHeader(lines);
  const out: string[] = [];
  const { oldMode, newMode } = facts;
  const oldLink = oldMode === SYMLINK;
  const newLink = newMode === SYMLINK;
  if (file.change_type === 'renamed' && file.old_path !== null) {
    if (!facts.hasHunks && (oldMode === newMode || oldMode === null || newMode === null))
      out.push(`renamed from ${file.old_path} without changes`);
    else if (facts.similarity !== null) out.push(`renamed from ${file.old_path} (${facts.similarity}% similar)`);
    else out.push(`renamed from ${file.old_path}`);
  }
  if (oldLink && newLink) {
    const before = linkTarget(lines, 'del');
    const after = linkTarget(lines, 'add');
    out.push(before !== null && after !== null ? `symlink -> ${after} (was -> ${before})` : 'symlink');
  } else if (newLink) {
    const target = linkTarget(lines, 'add');
    out.push(oldMode === null ? `symlink -> ${target ?? ''}` : `file replaced by symlink -> ${target ?? ''}`);
  } else if (oldLink) {
    const target = linkTarget(lines, 'del');
    out.push(newMode === null ? `symlink -> ${target ?? ''} removed` : `symlink -> ${target ?? ''} replaced by a file`);
  } else if (oldMode !== null && newMode !== null && oldMode !== newMode) {
    out.push(`mode ${shortMode(oldMode)} -> ${shortMode(newMode)}`);
  } else if (file.change_type === 'added' && newMode !== null && newMode !== '100644') {
    out.push(`new file, mode ${shortMode(newMode)}`);
  }
  if (facts.binary) {
    if (file.change_type === 'added') out.push('new binary file');
    else if (file.change_type === 'deleted') out.push('binary file deleted');
    else out.push('binary file changed');
  }
  if (!facts.hasHunks && out.length === 0) {
    if (file.change_type === 'added') out.push('new empty file');
    else if (file.change_type === 'deleted') out.push('empty file deleted');
    else out.push('no content changes');
  }
  return out;
}

/**
 * A `git diff` file patch's change type, read from its header: for a patch that comes without a
 * stored file row (the approval prompt's diff). `oldPath` is git's rename source, when it reported one.
 */
export function patchChangeType(lines: readonly PatchLine[], oldPath: string | null): ChangeType {
  if (oldPath !== null) return 'renamed';
  const meta = lines.filter((l) => l.kind === 'meta').map((l) => l.text);
  if (meta.some((t) => t.startsWith('new file mode '))) return 'added';
  if (meta.some((t) => t.startsWith('deleted file mode '))) return 'deleted';
  return 'modified';
}

/**
 * `line endings LF → CRLF` (or `CRLF → LF`) when every changed line of the patch is the same line
 * with only its line ending changed, as git's `--ws-error-highlight` would show it; null otherwise.
 * Read from the raw patch: the viewer's lines drop the `\r`.
 */
export function lineEndingLabel(patch: string): string | null {
  const dels: string[] = [];
  const adds: string[] = [];
  let changed = false;
  let toCrlf = 0;
  let toLf = 0;
  const flush = (): boolean => {
    if (dels.length !== adds.length) return false;
    for (let i = 0; i < dels.length; i++) {
      const d = dels[i]!;
      const a = adds[i]!;
      if (d === a || d.replace(/\r$/, '') !== a.replace(/\r$/, '')) return false;
      if (a.endsWith('\r')) toCrlf++;
      else toLf++;
      changed = true;
    }
    dels.length = 0;
    adds.length = 0;
    return true;
  };
  let inHunk = false;
  for (const line of patch.split('\n')) {
    if (line.startsWith('@@')) {
      if (!flush()) return null;
      inHunk = true;
    } else if (line.startsWith('diff --git')) {
      if (!flush()) return null;
      inHunk = false;
    } else if (!inHunk) continue;
    else if (line.startsWith('-')) dels.push(line.slice(1));
    else if (line.startsWith('+')) adds.push(line.slice(1));
    else if (!flush()) return null;
  }
  if (!flush() || !changed) return null;
  return toCrlf > 0 && toLf > 0
    ? 'line endings changed'
    : toCrlf > 0
      ? 'line endings LF → CRLF'
      : 'line endings CRLF → LF';
}

/** The lines the viewer shows: git's header lines are replaced by `headerLabels`. */
export function bodyLines(lines: readonly PatchLine[]): PatchLine[] {
  return lines.filter((l) => l.kind !== 'meta');
}

/** `512 B`, `1.5 KiB`, `2.0 MiB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A binary file's sizes: `binary: 1.5 KiB -> 2.0 KiB`, `binary: new, 2.0 KiB`, `binary: 1.5 KiB, deleted`. */
export function binarySizes(file: {
  change_type: ChangeType;
  size_before: number | null;
  size_after: number | null;
}): string {
  const before = file.size_before === null ? '?' : formatSize(file.size_before);
  const after = file.size_after === null ? '?' : formatSize(file.size_after);
  if (file.change_type === 'added') return `binary: new, ${after}`;
  if (file.change_type === 'deleted') return `binary: ${before}, deleted`;
  return `binary: ${before} -> ${after}`;
}
