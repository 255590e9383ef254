import type { ChangeType, DiffCompletedFile } from '../../../shared/index.ts';

/** The fields of a changed file the compact block needs: those a FileSummary and a socket payload file share. */
export type ChangeRowInput = DiffCompletedFile;

export interface ChangeRow {
  id: string;
  /** `A`, `M`, `D` or `R`. */
  letter: 'A' | 'M' | 'D' | 'R';
  /** `path`, or `old -> new` for a rename. */
  label: string;
  /** `+12 -4`, or a word in place of counts (`binary changed`, `too large`, `diff truncated`, ...). */
  stats: string;
  /** True when `stats` is a word rather than counts. */
  statsIsNote: boolean;
  additions: number;
  deletions: number;
}

const LETTERS: Record<ChangeType, ChangeRow['letter']> = {
  added: 'A',
  modified: 'M',
  deleted: 'D',
  renamed: 'R',
};

/**
 * The word shown instead of `+a -d`, or null when the counts are shown.
 * `budget` keeps exact counts (only the patch is missing), so it shows counts.
 */
export function statsNote(file: Pick<ChangeRowInput, 'binary' | 'truncated' | 'omitted_reason'>): string | null {
  if (file.omitted_reason === 'unreadable') return 'unreadable';
  // A binary row with its patch kept is an exact rename or a mode change: no byte changed.
  if (file.binary && file.omitted_reason === null) return 'binary unchanged';
  if (file.binary || file.omitted_reason === 'binary') return 'binary changed';
  if (file.omitted_reason === 'too_large') return 'too large';
  if (file.omitted_reason === 'no_snapshot') return 'no snapshot';
  if (file.omitted_reason === 'too_complex') return 'too complex';
  if (file.truncated) return 'diff truncated';
  return null;
}

export function formatChangeRow(file: ChangeRowInput): ChangeRow {
  const note = statsNote(file);
  const label =
    file.change_type === 'renamed' && file.old_path !== null ? `${file.old_path} -> ${file.path}` : file.path;
  return {
    id: file.id,
    letter: LETTERS[file.change_type],
    label,
    stats: note ?? `+${file.additions} -${file.deletions}`,
    statsIsNote: note !== null,
    additions: file.additions,
    deletions: file.deletions,
  };
}

/** A stored patch larger than this (UTF-8 bytes) opens collapsed behind "Load diff"... */
export const LOAD_DIFF_BYTES = 48 * 1024;
/** ...and so does one with more changed lines than this. */
export const LOAD_DIFF_LINES = 1_000;

/**
 * The file's patch is big enough to be fetched and rendered only when asked (a lock file, a
 * generated file). A row left out for the change's patch budget is opened from the kept contents,
 * so its line counts gate it like a stored patch. A file whose patch was not stored for another
 * reason has nothing big to fetch: it opens at once on why its patch is missing.
 */
export function needsLoadDiff(
  file: Pick<ChangeRowInput, 'additions' | 'deletions'> & { patch_bytes: number; omitted_reason?: string | null },
): boolean {
  if (file.omitted_reason && file.omitted_reason !== 'budget') return false;
  return file.patch_bytes > LOAD_DIFF_BYTES || file.additions + file.deletions > LOAD_DIFF_LINES;
}

/**
 * What a collapsed big diff says: `Large diff: +2,300 -0 lines, 128.0 KiB`. A row left out for the
 * budget has no stored size: `Large diff: +2,300 -0 lines, computed when loaded`; another row without
 * a patch: `..., patch not stored`.
 */
export function largeDiffText(
  file: Pick<ChangeRowInput, 'additions' | 'deletions'> & { patch_bytes: number; omitted_reason?: string | null },
): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const size =
    file.omitted_reason === 'budget'
      ? 'computed when loaded'
      : file.omitted_reason
        ? 'patch not stored'
        : `${(file.patch_bytes / 1024).toFixed(1)} KiB`;
  return `Large diff: +${n(file.additions)} -${n(file.deletions)} lines, ${size}`;
}

/** `Changed 1 file`, `Changed 3 files`. */
export function changedHeading(count: number): string {
  return `Changed ${count} ${count === 1 ? 'file' : 'files'}`;
}

/**
 * The accessible name of a change's whole file list: `Changed 300 files: all 300 listed`; with
 * viewed files hidden, `Changed 101 files: 100 of 101 listed, 1 viewed file hidden`.
 */
export function fileListLabel(changedCount: number, total: number, omittedCount: number, hidden = 0): string {
  const stored = omittedCount > 0 ? `the ${total} stored` : `all ${total}`;
  if (hidden <= 0) return `${changedHeading(changedCount)}: ${stored} listed`;
  const of = omittedCount > 0 ? `the ${total} stored` : `${total}`;
  return `${changedHeading(changedCount)}: ${total - hidden} of ${of} listed, ${hidden} viewed ${hidden === 1 ? 'file' : 'files'} hidden`;
}

/** `+1 more file`, `+4 more files`, or null when nothing was omitted. */
export function moreFilesText(omittedCount: number): string | null {
  if (omittedCount <= 0) return null;
  return `+${omittedCount} more ${omittedCount === 1 ? 'file' : 'files'}`;
}

/** `Working... 3 files touched` while a run is open. */
export function progressText(touchedCount: number): string {
  return `Working... ${touchedCount} ${touchedCount === 1 ? 'file' : 'files'} touched`;
}

/** A path cut after each `/`, so a narrow screen breaks it at its slashes (`<wbr>` between the parts). */
export function slashParts(path: string): string[] {
  return path.split(/(?<=\/)/);
}
