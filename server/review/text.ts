import { MAX_REVIEW_TEXT_BYTES, type CommentSide, type ReviewTextBound } from '../../shared/index.ts';

/**
 * The text a review reaches the agent as: one structured document (a header, the overall note, then
 * each comment's file, lines, quoted code and body) within a bound the receiving agent reads whole.
 * Comments that do not fit are left out at a comment boundary and counted in a stated marker (they
 * go with the next delivery). The person's words (note, bodies) are on lines starting with `> ` and
 * quoted code sits in a fence it cannot close, so neither can imitate the text's own structure;
 * control characters other than line breaks and tabs are written as `\uXXXX`. Pure; the text is data
 * for a JSON string field (built by JSON.stringify), never spliced into JSON or a command.
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

export type TextBound = ReviewTextBound;

/** The bound of a delivery that names none (MCP, REST, and agents without a known cap). */
export const DEFAULT_TEXT_BOUND: TextBound = { max: MAX_REVIEW_TEXT_BYTES, unit: 'bytes' };

/** Quoted code per comment (in the bound's unit, and at most a quarter of the bound): a long selection is cut, its remaining lines counted. */
export const MAX_QUOTE_BYTES = 4 * 1024;

export const sizeIn = (unit: TextBound['unit'], s: string): number =>
  unit === 'bytes' ? Buffer.byteLength(s, 'utf8') : s.length;

/** The longest prefix of `text` within `max` (in `unit`), cut on a character boundary. */
export function cutTo(text: string, max: number, unit: TextBound['unit'] = 'bytes'): string {
  if (sizeIn(unit, text) <= max) return text;
  let out = '';
  let used = 0;
  for (const ch of text) {
    const n = sizeIn(unit, ch);
    if (used + n > max) break;
    out += ch;
    used += n;
  }
  return out;
}

/** The longest prefix of `text` within `max` UTF-8 bytes, cut on a character boundary. */
export const cutToBytes = (text: string, max: number): string => cutTo(text, max, 'bytes');

/** A fence longer than any run of backticks inside the text, so the quote cannot be closed from within. */
export function fenceFor(text: string): string {
  let longest = 0;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(Math.max(3, longest + 1));
}

/**
 * Characters a model or a terminal may read as something other than text: C0 and C1 controls, DEL,
 * the Unicode line and paragraph separators, the bidirectional marks, overrides and isolates
 * (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069), and the invisible format characters that
 * can carry a message no person reviewing sees: zero-width characters (U+200B-U+200D), U+2060-U+2064,
 * the deprecated format controls U+206A-U+206F, U+FEFF, the interlinear annotation marks
 * U+FFF9-U+FFFB, the tag characters U+E0000-U+E007F and the supplementary variation selectors
 * U+E0100-U+E01EF. The sixteen variation selectors U+FE00-U+FE0F stay: emoji and CJK text use them
 * to pick a glyph, and escaping them would garble ordinary comments.
 */
// The joiner (U+200D) and the variation selectors stand outside the class: inside one they would
// read as combining with their neighbours.
const CONTROLS =
  /[\p{Cc}\u061c\u200b\u200c\u200e\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]|\u200d|[\u{e0100}-\u{e01ef}]/gu;

const hex4 = (unit: number) => `\\u${unit.toString(16).padStart(4, '0')}`;

/**
 * `text` with every control character except those in `keep` written as `\uXXXX` (a character
 * past U+FFFF as its two UTF-16 halves, as JSON writes it).
 */
export function escapeControls(text: string, keep = ''): string {
  return text.replace(CONTROLS, (ch) =>
    keep.includes(ch) ? ch : Array.from({ length: ch.length }, (_, i) => hex4(ch.charCodeAt(i))).join(''),
  );
}

const HAS_CONTROL = new RegExp(CONTROLS.source, 'u');

/** `text` with `<` and `>` written as `\u003c`/`\u003e` when `noAngles` (see `ReviewTextBound`). */
const angles = (text: string, noAngles: boolean) =>
  noAngles ? text.replace(/[<>]/g, (ch) => hex4(ch.charCodeAt(0))) : text;

/** A path on one line: as it is, or JSON-quoted (and escaped) when it holds a control character. */
const pathText = (path: string, noAngles = false) =>
  angles(HAS_CONTROL.test(path) ? escapeControls(JSON.stringify(path)) : path, noAngles);

/**
 * The person's words (a note, a comment body): every line behind `> ` (`| ` when `noAngles`),
 * controls escaped, tabs and line breaks kept.
 */
export function quoteWords(text: string, noAngles = false): string {
  const marker = noAngles ? '|' : '>';
  return angles(escapeControls(text.replace(/\r\n/g, '\n'), '\n\t'), noAngles)
    .split('\n')
    .map((line) => (line === '' ? marker : `${marker} ${line}`))
    .join('\n');
}

const lineRange = (c: { start_line: number; end_line: number }) =>
  c.start_line === c.end_line ? `line ${c.start_line}` : `lines ${c.start_line}-${c.end_line}`;

/** How each side is named in a comment's heading (docs/contract.md section 3c). */
export const SIDE_TEXT: Record<CommentSide, string> = {
  after: 'after the change',
  before: 'before the change: removed or replaced code',
};

/** The quoted lines within `max` (in `unit`), with the count of lines left out. */
function quote(raw: readonly string[], max: number, unit: TextBound['unit'], noAngles: boolean): string {
  const lines = raw.map((l) => angles(escapeControls(l, '\t'), noAngles));
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    const n = sizeIn(unit, line) + 1;
    if (used + n > max) break;
    kept.push(line);
    used += n;
  }
  let text = kept.join('\n');
  if (kept.length === 0 && lines.length > 0) text = cutTo(lines[0]!, max, unit);
  const left = lines.length - Math.max(kept.length, lines.length > 0 ? 1 : 0);
  const fence = fenceFor(text);
  return `${fence}\n${text}\n${fence}${left > 0 ? `\n[${left} more line${left === 1 ? '' : 's'} not quoted]` : ''}`;
}

function commentBlock(c: ReviewTextComment, index: number, quoteMax: number, bound: TextBound): string {
  const noAngles = bound.noAngleBrackets === true;
  return [
    `### Comment ${index} — ${pathText(c.path, noAngles)}, ${lineRange(c)} (${SIDE_TEXT[c.side]})`,
    `Comment id: ${angles(c.id, noAngles)}`,
    quote(c.lines, quoteMax, bound.unit, noAngles),
    '',
    quoteWords(c.body, noAngles),
  ].join('\n');
}

const UNIT_WORD = { bytes: 'bytes', chars: 'characters' } as const;

const notIncluded = (n: number, bound: TextBound) =>
  `[${n} more comment${n === 1 ? '' : 's'} of this review did not fit in this message (at most ${bound.max} ${UNIT_WORD[bound.unit]}): ${n === 1 ? 'it follows' : 'they follow'} in the next delivery, with your next prompt or the next review_comments call]`;
const NOTE_CUT = '\n[the note is cut here: it is longer than this message may be; the user sees it whole in rundiff]';
const COMMENT_CUT =
  '\n[this comment is cut here: it is longer than this message may be; the user sees it whole in rundiff]';

export interface ReviewTextResult {
  text: string;
  /** The first `included` comments are in the text (the last of them cut when `cut`); the others are not. */
  included: number;
  omitted: number;
  /** The note or the one comment sent was cut to fit. */
  cut: boolean;
}

/**
 * The review as the agent reads it, within `bound` (default `DEFAULT_TEXT_BOUND`). Comments are
 * taken in order while they fit whole. When the first one does not fit and nothing else (no note)
 * is in the text, it is sent cut, said so, so that every delivery carries something and no comment
 * waits forever; a note too long is cut the same way.
 */
export function reviewText(
  input: ReviewTextInput,
  opts: { bound?: TextBound; quoteMax?: number } = {},
): ReviewTextResult {
  const bound = opts.bound ?? DEFAULT_TEXT_BOUND;
  const { max, unit } = bound;
  const size = (s: string) => sizeIn(unit, s);
  const quoteMax = opts.quoteMax ?? Math.min(MAX_QUOTE_BYTES, Math.floor(max / 4));
  const n = input.comments.length;
  const noAngles = bound.noAngleBrackets === true;
  const header = [
    '# Code review from the user (sent with rundiff)',
    '',
    `The user reviewed your recent changes${n > 0 ? ` and left ${n} comment${n === 1 ? '' : 's'} on specific lines` : ''}. Please address this review. Quoted code is shown between fences; the user's own words (the overall note, and each comment's text after its quote) are on lines starting with "${noAngles ? '| ' : '> '}". Control characters${noAngles ? ', and the angle brackets (which this agent would rewrite),' : ''} are written as \\u escapes.`,
  ].join('\n');
  // Room kept for the largest marker the text may need.
  const reserve = size(`\n\n${notIncluded(n, bound)}`);
  let text = header;
  let cut = false;
  const hasNote = input.note.trim() !== '';
  if (hasNote) {
    const noteHead = '\n\n## Overall note\n\n';
    const room = max - reserve - size(text) - size(noteHead);
    const words = quoteWords(input.note, noAngles);
    let note = words;
    if (size(words) > room) {
      note = cutTo(words, Math.max(0, room - size(NOTE_CUT)), unit) + NOTE_CUT;
      cut = true;
    }
    text += noteHead + note;
  }
  if (n > 0) text += '\n\n## Comments';
  let included = 0;
  for (const [i, c] of input.comments.entries()) {
    const block = `\n\n${commentBlock(c, i + 1, quoteMax, bound)}`;
    const left = n - i - 1;
    const room = max - size(text) - (left > 0 ? reserve : 0);
    if (size(block) <= room) {
      text += block;
      included++;
      continue;
    }
    if (included === 0 && !hasNote) {
      // The first comment alone is longer than the bound: send what fits of it, said so.
      text += cutTo(block, Math.max(0, max - reserve - size(text) - size(COMMENT_CUT)), unit) + COMMENT_CUT;
      included++;
      cut = true;
    }
    break;
  }
  const omitted = n - included;
  if (omitted > 0) {
    if (included === 0) text = text.slice(0, -'\n\n## Comments'.length);
    text += `\n\n${notIncluded(omitted, bound)}`;
  }
  return { text, included, omitted, cut };
}
