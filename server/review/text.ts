import { MAX_REVIEW_TEXT_BYTES, type CommentSide } from '../../shared/index.ts';

/**
 * The text a review reaches the agent as: one structured document (a header, the overall note, then
 * each comment's file, lines, quoted code and body), at most `maxBytes` UTF-8 bytes. Comments that
 * do not fit are left out at a comment boundary and counted in a stated marker. Pure; the text is
 * data for a JSON string field (built by JSON.stringify), never spliced into JSON or a command.
 */

export interface ReviewTextComment {
  id: string;
  path: string;
  side: CommentSide;
  start_line: number;
  end_line: number;
  lines: readonly string[];
  body: string;
}

export interface ReviewTextInput {
  note: string;
  comments: readonly ReviewTextComment[];
}

/** Quoted code per comment (UTF-8 bytes): a long selection is cut, its remaining lines counted. */
export const MAX_QUOTE_BYTES = 4 * 1024;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** The longest prefix of `text` within `max` UTF-8 bytes, cut on a character boundary. */
export function cutToBytes(text: string, max: number): string {
  if (bytes(text) <= max) return text;
  let out = '';
  let used = 0;
  for (const ch of text) {
    const n = bytes(ch);
    if (used + n > max) break;
    out += ch;
    used += n;
  }
  return out;
}

/** A fence longer than any run of backticks inside the text, so the quote cannot be closed from within. */
export function fenceFor(text: string): string {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

const CONTROL = /[\p{Cc}\u2028\u2029]/u;

/** A path on one line: as it is, or JSON-quoted when it holds a line break or another control character. */
const pathText = (path: string) => (CONTROL.test(path) ? JSON.stringify(path) : path);

const lineRange = (c: { start_line: number; end_line: number }) =>
  c.start_line === c.end_line ? `line ${c.start_line}` : `lines ${c.start_line}-${c.end_line}`;

const SIDE_TEXT: Record<CommentSide, string> = {
  after: 'as the change left it',
  before: 'before the change (removed or replaced code)',
};

/** The quoted lines within `MAX_QUOTE_BYTES`, with the count of lines left out. */
function quote(lines: readonly string[], maxBytes: number): string {
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    const n = bytes(line) + 1;
    if (used + n > maxBytes) break;
    kept.push(line);
    used += n;
  }
  let text = kept.join('\n');
  if (kept.length === 0 && lines.length > 0) text = cutToBytes(lines[0]!, maxBytes);
  const left = lines.length - Math.max(kept.length, lines.length > 0 ? 1 : 0);
  const fence = fenceFor(text);
  return `${fence}\n${text}\n${fence}${left > 0 ? `\n[${left} more line${left === 1 ? '' : 's'} not quoted]` : ''}`;
}

function commentBlock(c: ReviewTextComment, index: number, quoteBytes: number): string {
  return [
    `### Comment ${index} — ${pathText(c.path)}, ${lineRange(c)} (${SIDE_TEXT[c.side]})`,
    `Comment id: ${c.id}`,
    quote(c.lines, quoteBytes),
    '',
    c.body,
  ].join('\n');
}

const notIncluded = (n: number) =>
  `[${n} more comment${n === 1 ? '' : 's'} not included: the review is longer than ${'{max}'} bytes; the user sees ${n === 1 ? 'it' : 'them'} in rundiff]`;

/**
 * The review as the agent reads it. `maxBytes` bounds the whole text (tests pass small values); a
 * note or a single comment too long for the budget is cut with a marker saying so.
 */
export function reviewText(
  input: ReviewTextInput,
  opts: { maxBytes?: number; quoteBytes?: number } = {},
): { text: string; included: number; omitted: number } {
  const max = opts.maxBytes ?? MAX_REVIEW_TEXT_BYTES;
  const quoteBytes = opts.quoteBytes ?? MAX_QUOTE_BYTES;
  const n = input.comments.length;
  const header = [
    '# Code review from the user (sent with rundiff)',
    '',
    `The user reviewed your recent changes${n > 0 ? ` and left ${n} comment${n === 1 ? '' : 's'} on specific lines` : ''}. Please address this review. Quoted code is shown between fences; each comment's text follows its quote.`,
  ].join('\n');
  const marker = (k: number) => notIncluded(k).replace('{max}', String(max));
  // Room kept for the largest marker the text may need.
  const reserve = bytes(`\n\n${marker(n)}`);
  let text = header;
  if (input.note.trim() !== '') {
    const noteHead = '\n\n## Overall note\n\n';
    const noteCut = '\n[the note is cut here: it is longer than the review text may be]';
    const room = max - reserve - bytes(text) - bytes(noteHead);
    const note =
      bytes(input.note) <= room ? input.note : cutToBytes(input.note, Math.max(0, room - bytes(noteCut))) + noteCut;
    text += noteHead + note;
  }
  if (n > 0) text += '\n\n## Comments';
  let included = 0;
  for (const [i, c] of input.comments.entries()) {
    const block = `\n\n${commentBlock(c, i + 1, quoteBytes)}`;
    const left = n - i - 1;
    const room = max - bytes(text) - (left > 0 ? reserve : 0);
    if (bytes(block) <= room) {
      text += block;
      included++;
      continue;
    }
    if (included === 0) {
      // The first comment alone is longer than the budget: send what fits of it, said so.
      const cut = '\n[this comment is cut here: it is longer than the review text may be]';
      text += cutToBytes(block, Math.max(0, max - reserve - bytes(text) - bytes(cut))) + cut;
      included++;
      continue;
    }
    break;
  }
  const omitted = n - included;
  if (omitted > 0) text += `\n\n${marker(omitted)}`;
  return { text, included, omitted };
}
