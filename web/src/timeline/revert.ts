import type { ChangeType, ContentStoreStats, RevertAction, RevertFile, RevertResponse } from '../../../shared/index.ts';

/** What a revert does to one file, in words (the preview and the outcome). */
const ACTION_WORDS: Record<RevertAction, string> = {
  restore: 'will be restored',
  merge: 'will be merged with your later edits',
  conflict: 'conflicts with later edits: left as it is',
  unchanged: 'already as before the run',
  unavailable: 'cannot be reverted',
  refused: 'refused: cannot be written safely',
};

const DONE_WORDS: Partial<Record<RevertAction, string>> = {
  restore: 'restored',
  merge: 'merged',
};

export function revertActionText(f: RevertFile, applied: boolean): string {
  if (applied && f.applied) return DONE_WORDS[f.action] ?? ACTION_WORDS[f.action];
  if (applied && f.error) return `failed: ${f.error}`;
  return ACTION_WORDS[f.action];
}

/** The file's name as the preview shows it: a rename goes back to its old name. */
export function revertPathText(f: RevertFile): string {
  return f.old_path !== null ? `${f.path} → ${f.old_path}` : f.path;
}

/** The line above the preview's files. */
export function revertPlanSummary(r: RevertResponse): string {
  const n = r.files.length;
  const parts = [`${r.applied_count} of ${n} ${n === 1 ? 'file' : 'files'} will be written`];
  if (r.conflict_count > 0) parts.push(`${r.conflict_count} ${r.conflict_count === 1 ? 'conflicts' : 'conflict'}`);
  if (r.unavailable_count > 0) parts.push(`${r.unavailable_count} cannot be reverted`);
  return parts.join(', ');
}

const CLEAN = new Set(['restore', 'merge']);
const BLOCKING = new Set(['conflict', 'unavailable', 'refused']);

/** Files of a plan that would be written, and files that cannot be reverted. */
export function revertPlanCounts(r: RevertResponse): { clean: number; blocked: number } {
  return {
    clean: r.files.filter((f) => CLEAN.has(f.action)).length,
    blocked: r.files.filter((f) => BLOCKING.has(f.action)).length,
  };
}

/** Under the summary, when some file cannot be reverted: why Apply writes nothing. */
export function revertBlockedNote(r: RevertResponse): string | null {
  const { clean, blocked } = revertPlanCounts(r);
  if (blocked === 0) return null;
  const which = `${blocked} ${blocked === 1 ? 'file' : 'files'} cannot be reverted (marked below)`;
  return clean > 0
    ? `${which}: a revert is all or nothing, so Apply is off. Reverting only the others leaves ${blocked === 1 ? 'it' : 'them'} as ${blocked === 1 ? 'it is' : 'they are'}, which can leave the code inconsistent.`
    : `${which}: nothing would be written.`;
}

/** The second button: write the clean files alone, saying what it leaves. */
export function revertPartialLabel(r: RevertResponse): string {
  const { clean, blocked } = revertPlanCounts(r);
  return `Revert only ${clean} ${clean === 1 ? 'file' : 'files'}, leave ${blocked}`;
}

/** The line after a revert was applied. */
export function revertDoneSummary(r: RevertResponse): string {
  const n = r.files.length;
  const written = r.files.filter((f) => f.applied).length;
  const failed = r.files.filter((f) => f.error !== undefined).length;
  const text = `Reverted ${written} of ${n} ${n === 1 ? 'file' : 'files'}`;
  return failed > 0 ? `${text}; ${failed} could not be written` : text;
}

/** What the patch viewer needs to know of a revert's patch, read from the patch itself. */
export function revertPatchFacts(f: RevertFile): {
  path: string;
  oldPath: string | null;
  changeType: ChangeType;
  additions: number;
  deletions: number;
} {
  const patch = f.patch ?? '';
  let additions = 0;
  let deletions = 0;
  let inHunk = false;
  for (const line of patch.split('\n')) {
    if (line.startsWith('@@')) inHunk = true;
    else if (line.startsWith('diff --git')) inHunk = false;
    else if (inHunk && line.startsWith('+')) additions++;
    else if (inHunk && line.startsWith('-')) deletions++;
  }
  // The revert goes from what stands now (the run's end, at `path`) back to the start (`old_path`).
  const changeType: ChangeType = /^new file mode /m.test(patch)
    ? 'added'
    : /^deleted file mode /m.test(patch)
      ? 'deleted'
      : /^rename from /m.test(patch)
        ? 'renamed'
        : 'modified';
  return {
    path: f.old_path ?? f.path,
    oldPath: changeType === 'renamed' ? f.path : null,
    changeType,
    additions,
    deletions,
  };
}

/** Lines of context kept around each conflict. */
const CONFLICT_CONTEXT = 3;

/**
 * A conflicting merge as the preview shows it: each conflict (from `<<<<<<<` to `>>>>>>>`, both
 * sides) with a few lines around it; the unchanged stretches between are one `⋯ N lines` line.
 */
export function conflictExcerpt(merged: string): string {
  const lines = merged.replace(/\n$/, '').split('\n');
  const keep = new Array<boolean>(lines.length).fill(false);
  let open = -1;
  lines.forEach((l, i) => {
    if (l.startsWith('<<<<<<< ')) open = i;
    if (l.startsWith('>>>>>>> ') && open !== -1) {
      for (let k = Math.max(0, open - CONFLICT_CONTEXT); k <= Math.min(lines.length - 1, i + CONFLICT_CONTEXT); k++)
        keep[k] = true;
      open = -1;
    }
  });
  if (!keep.includes(true)) return merged;
  const out: string[] = [];
  let skipped = 0;
  const flush = () => {
    if (skipped > 0) out.push(`⋯ ${skipped} unchanged ${skipped === 1 ? 'line' : 'lines'}`);
    skipped = 0;
  };
  lines.forEach((l, i) => {
    if (!keep[i]) skipped++;
    else {
      flush();
      out.push(l);
    }
  });
  flush();
  return out.join('\n') + '\n';
}

/** A byte count for people: `0 B`, `1.5 KiB`, `12.3 MiB`, `1 GiB`. */
export function bytesText(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const shown = u === 0 || v >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1);
  return `${shown} ${units[u]}`;
}

/** `12.3 MiB of 1 GiB kept for undo`. */
export function contentStoreText(s: ContentStoreStats): string {
  return `${bytesText(s.bytes_used)} of ${bytesText(s.max_bytes)} kept for undo`;
}
