import { describe, expect, it } from 'vitest';
import { mergePieces, tokensFromHighlight } from './tokens.ts';

describe('tokensFromHighlight', () => {
  it('reads highlight.js spans and entities back into text tokens, line by line', () => {
    const source = 'const a = "<b>";\n// x & y';
    const html =
      '<span class="hljs-keyword">const</span> a = <span class="hljs-string">&quot;&lt;b&gt;&quot;</span>;\n<span class="hljs-comment">// x &amp; y</span>';
    expect(tokensFromHighlight(html, source)).toEqual([
      [
        { text: 'const', cls: 'hljs-keyword' },
        { text: ' a = ', cls: '' },
        { text: '"<b>"', cls: 'hljs-string' },
        { text: ';', cls: '' },
      ],
      [{ text: '// x & y', cls: 'hljs-comment' }],
    ]);
  });

  it('splits a token that spans lines (a block comment) into one per line, nesting classes', () => {
    const source = '/* a\nb */';
    const html = '<span class="hljs-comment">/* a\n<span class="hljs-doctag">b</span> */</span>';
    expect(tokensFromHighlight(html, source)).toEqual([
      [{ text: '/* a', cls: 'hljs-comment' }],
      [
        { text: 'b', cls: 'hljs-comment hljs-doctag' },
        { text: ' */', cls: 'hljs-comment' },
      ],
    ]);
  });

  it('refuses markup it does not expect, or text that differs from the source (the caller shows plain text)', () => {
    expect(tokensFromHighlight('<img src=x onerror=alert(1)>', '<img src=x onerror=alert(1)>')).toBeNull();
    expect(tokensFromHighlight('a</span>', 'a')).toBeNull();
    expect(tokensFromHighlight('abc', 'abd')).toBeNull();
  });
});

describe('mergePieces', () => {
  it('cuts syntax tokens at changed-range boundaries', () => {
    const pieces = mergePieces(
      'let total = 1;',
      [
        { text: 'let', cls: 'k' },
        { text: ' total = ', cls: '' },
        { text: '1', cls: 'n' },
        { text: ';', cls: '' },
      ],
      [
        { start: 4, end: 9 },
        { start: 12, end: 13 },
      ],
    );
    expect(pieces).toEqual([
      { text: 'let', cls: 'k', changed: false },
      { text: ' ', cls: '', changed: false },
      { text: 'total', cls: '', changed: true },
      { text: ' = ', cls: '', changed: false },
      { text: '1', cls: 'n', changed: true },
      { text: ';', cls: '', changed: false },
    ]);
  });

  it('without tokens or ranges the line is one plain piece', () => {
    expect(mergePieces('plain', null, [])).toEqual([{ text: 'plain', cls: '', changed: false }]);
  });
});
