/** A run of a line's content with one syntax class (`''` for plain text). */
export interface Token {
  text: string;
  cls: string;
}

/** One rendered piece of a line: syntax class and whether it lies in a changed word range. */
export interface Piece {
  text: string;
  cls: string;
  changed: boolean;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#x27;': "'" };
const MARKUP = /<span class="([^"]*)">|<\/span>|&(?:amp|lt|gt|quot|#x27);|[^<&]+/g;

/**
 * Turns highlight.js output back into text tokens, one list per line. highlight.js escapes the
 * source and adds only `<span class="...">`/`</span>`, so that is all this reads; the tokens are
 * rendered as Vue text nodes, so no markup from a file is ever parsed as HTML by the page. The
 * texts joined equal the highlighted source exactly; anything unexpected makes it return null
 * (the caller shows plain text).
 */
export function tokensFromHighlight(html: string, source: string): Token[][] | null {
  const lines: Token[][] = [[]];
  const classes: string[] = [];
  let rebuilt = '';
  MARKUP.lastIndex = 0;
  let at = 0;
  for (let m = MARKUP.exec(html); m; m = MARKUP.exec(html)) {
    if (m.index !== at) return null;
    at = m.index + m[0].length;
    if (m[1] !== undefined) {
      classes.push(m[1]);
      continue;
    }
    if (m[0] === '</span>') {
      if (classes.pop() === undefined) return null;
      continue;
    }
    const text = ENTITIES[m[0]] ?? m[0];
    rebuilt += text;
    const cls = classes.join(' ');
    const parts = text.split('\n');
    parts.forEach((part, i) => {
      if (i > 0) lines.push([]);
      if (part === '') return;
      const line = lines[lines.length - 1]!;
      const last = line[line.length - 1];
      if (last && last.cls === cls) last.text += part;
      else line.push({ text: part, cls });
    });
  }
  if (at !== html.length || rebuilt !== source) return null;
  return lines;
}

/**
 * Splits a line's content into pieces at every syntax-token and changed-range boundary. Without
 * tokens the whole text is one plain token.
 */
export function mergePieces(
  text: string,
  tokens: readonly Token[] | null,
  changed: readonly { start: number; end: number }[],
): Piece[] {
  const toks = tokens ?? [{ text, cls: '' }];
  const out: Piece[] = [];
  let pos = 0;
  let r = 0;
  for (const tok of toks) {
    let offset = 0;
    while (offset < tok.text.length) {
      while (r < changed.length && changed[r]!.end <= pos) r++;
      const range = changed[r];
      const inRange = range !== undefined && range.start <= pos;
      const boundary = range === undefined ? Infinity : inRange ? range.end : range.start;
      const take = Math.min(tok.text.length - offset, boundary - pos);
      const piece = tok.text.slice(offset, offset + take);
      const last = out[out.length - 1];
      if (last && last.cls === tok.cls && last.changed === inRange) last.text += piece;
      else out.push({ text: piece, cls: tok.cls, changed: inRange });
      offset += take;
      pos += take;
    }
  }
  return out;
}
