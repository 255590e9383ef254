import {
  formatDuration,
  type ChangeFilesPage,
  type CompleteResponse,
  type FileSummary,
  type UntrackedReason,
} from '../../shared/index.ts';
import { quotePath } from './quote-path.ts';

/** Words for why a run's changes were not tracked, shared by the CLI's summary lines. */
export const UNTRACKED_WORDS: Record<UntrackedReason, string> = {
  workspace_missing: 'the workspace folder does not exist',
  workspace_not_directory: 'the workspace is not a folder',
  workspace_not_allowed: 'the workspace is outside the allowed folders',
  workspace_unreadable: 'the workspace folder cannot be read',
  no_workspace: 'no workspace was named',
  no_checkpoint: 'no checkpoint was taken at the start (the server restarted or the run was not started)',
};

const LETTER = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' } as const;

/** `+12 -4`, or what stands in place of counts (`binary changed`, `binary unchanged`, `diff truncated`, `too large`). */
export function fileStat(
  f: Pick<FileSummary, 'binary' | 'truncated' | 'omitted_reason' | 'additions' | 'deletions'>,
): string {
  if (f.omitted_reason === 'unreadable') return 'unreadable';
  // A binary row with its patch kept is an exact rename or a mode change: no byte changed.
  if (f.binary && f.omitted_reason === null) return 'binary unchanged';
  if (f.binary) return 'binary changed';
  if (f.omitted_reason === 'too_large') return 'too large';
  if (f.omitted_reason === 'no_snapshot') return 'content not captured';
  if (f.truncated) return 'diff truncated';
  return `+${f.additions} -${f.deletions}`;
}

/** One row: `M src/Login.vue +12 -4`, renames `R old -> new +2 -1`; names quoted as git quotes them. */
export function fileRow(f: FileSummary): string {
  const name =
    f.change_type === 'renamed' && f.old_path !== null
      ? `${quotePath(f.old_path)} -> ${quotePath(f.path)}`
      : quotePath(f.path);
  return `${LETTER[f.change_type]} ${name} ${fileStat(f)}`;
}

/**
 * The completion answer carries the first page of rows; the rest come from `next` (the stored change's
 * pages) until its cursor runs out. A page that cannot be read stops the paging: what is missing is
 * then counted by summaryLines, never dropped silently.
 */
export async function withAllFiles(
  res: CompleteResponse,
  next: (cursor: string) => Promise<ChangeFilesPage | null>,
): Promise<CompleteResponse> {
  if (!res.tracking || res.next_file_cursor == null) return res;
  const files = [...res.files];
  let cursor: string | null = res.next_file_cursor;
  while (cursor !== null) {
    const page = await next(cursor);
    if (!page) break;
    files.push(...page.files);
    cursor = page.next_file_cursor;
  }
  const { files_total: _total, next_file_cursor: _cursor, ...rest } = res;
  return cursor === null ? { ...rest, files } : { ...rest, files, next_file_cursor: cursor };
}

/** The lines `rundiff run` prints on stderr after the command ends. */
export function summaryLines(res: CompleteResponse): string[] {
  if (!res.tracking) return [`rundiff: changes not tracked: ${UNTRACKED_WORDS[res.reason] ?? res.reason}`];
  if (res.changed_count === 0) return ['No files changed'];
  const lines = [`Changed ${res.changed_count} ${res.changed_count === 1 ? 'file' : 'files'}`];
  for (const f of res.files) lines.push(fileRow(f));
  // Paths past the stored-row bound have no row anywhere: say that the bound was hit, not just a count.
  const unstored = res.omitted_count;
  const unlisted = res.changed_count - res.files.length - unstored;
  if (unlisted > 0) lines.push(`+${unlisted} more ${unlisted === 1 ? 'file' : 'files'} (not read back)`);
  if (unstored > 0) {
    lines.push(
      `+${unstored} more ${unstored === 1 ? 'file' : 'files'} not stored: the change passed the bound of ` +
        `stored rows (RUNDIFF_MAX_CHANGED_FILES)`,
    );
  }
  return lines;
}

/** `exit 0 in 4.2 s`, `killed by SIGTERM after 1.0 s`. */
export function outcomeLine(exit: { code: number | null; signal: NodeJS.Signals | null }, ms: number): string {
  const took = formatDuration(ms);
  if (exit.signal) return `killed by ${exit.signal} after ${took}`;
  return `exit ${exit.code ?? 1} in ${took}`;
}
