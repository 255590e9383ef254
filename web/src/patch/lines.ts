/** One display line of a file's patch, with the line numbers of each side. */
export interface PatchLine {
  kind: 'meta' | 'hunk' | 'add' | 'del' | 'context' | 'note';
  /** The line as stored, without its newline. */
  text: string;
  /** Line number in the old file (context and deletions), else null. */
  oldNo: number | null;
  /** Line number in the new file (context and additions), else null. */
  newNo: number | null;
  /** An unchanged line taken from the recorded file rather than the stored patch (shown context, never folded). */
  extra?: true;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Splits a git-format file patch into display lines. Lines before the first hunk (`diff --git`,
 * mode and rename lines, `---`/`+++`) are `meta`; inside a hunk the old/new counters advance as git
 * defines them. A patch cut at a line boundary (a truncated file) simply ends early.
 */
export function parsePatch(patch: string): PatchLine[] {
  const lines = patch.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const out: PatchLine[] = [];
  let oldNo = 0;
  let newNo = 0;
  // Lines left in the current hunk on each side: a `---`/`+++` inside a hunk is content, not a header.
  let oldLeft = 0;
  let newLeft = 0;
  for (const raw of lines) {
    const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const inHunk = oldLeft > 0 || newLeft > 0;
    const hunk = inHunk ? null : HUNK.exec(text);
    if (hunk) {
      oldNo = Number(hunk[1]);
      newNo = Number(hunk[3]);
      oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
      out.push({ kind: 'hunk', text, oldNo: null, newNo: null });
      continue;
    }
    if (text.startsWith('\\')) {
      out.push({ kind: 'note', text, oldNo: null, newNo: null });
      continue;
    }
    if (!inHunk) {
      out.push({ kind: 'meta', text, oldNo: null, newNo: null });
      continue;
    }
    const sign = text[0];
    if (sign === '+') {
      out.push({ kind: 'add', text, oldNo: null, newNo: newNo++ });
      newLeft--;
    } else if (sign === '-') {
      out.push({ kind: 'del', text, oldNo: oldNo++, newNo: null });
      oldLeft--;
    } else {
      // A context line; an empty line inside a hunk is a context line whose leading space was lost.
      out.push({ kind: 'context', text, oldNo: oldNo++, newNo: newNo++ });
      oldLeft--;
      newLeft--;
    }
  }
  return out;
}
