import { describe, expect, it } from 'vitest';
import { MAX_REVIEW_TEXT_BYTES } from '../../shared/index.ts';
import { fenceFor, reviewText, type ReviewTextComment } from './text.ts';

const comment = (i: number, over: Partial<ReviewTextComment> = {}): ReviewTextComment => ({
  id: `c${i}`,
  path: 'src/app.ts',
  side: 'after',
  start_line: 3,
  end_line: 4,
  lines: ['const a = 1;', 'const b = 2;'],
  body: `Comment number ${i}.`,
  ...over,
});

describe('the review text an agent receives', () => {
  it('is a header, the overall note, then per comment its file, lines, side, id, quoted code and body', () => {
    const { text } = reviewText({
      note: 'Looks close; two things.',
      comments: [comment(1), comment(2, { start_line: 9, end_line: 9, side: 'before', lines: ['old()'] })],
    });
    expect(text).toBe(
      [
        '# Code review from the user (sent with rundiff)',
        '',
        "The user reviewed your recent changes and left 2 comments on specific lines. Please address this review. Quoted code is shown between fences; each comment's text follows its quote.",
        '',
        '## Overall note',
        '',
        'Looks close; two things.',
        '',
        '## Comments',
        '',
        '### Comment 1 — src/app.ts, lines 3-4 (as the change left it)',
        'Comment id: c1',
        '```',
        'const a = 1;',
        'const b = 2;',
        '```',
        '',
        'Comment number 1.',
        '',
        '### Comment 2 — src/app.ts, line 9 (before the change (removed or replaced code))',
        'Comment id: c2',
        '```',
        'old()',
        '```',
        '',
        'Comment number 2.',
      ].join('\n'),
    );
  });

  it('quotes code in a fence longer than any backtick run inside, so the quote cannot be closed from within', () => {
    expect(fenceFor('no ticks')).toBe('```');
    expect(fenceFor('a ```` b ` c')).toBe('`````');
    const { text } = reviewText({ note: '', comments: [comment(1, { lines: ['````', 'x'] })] });
    expect(text).toContain('`````\n````\nx\n`````');
  });

  it('a path with a line break is quoted on one line', () => {
    const { text } = reviewText({ note: '', comments: [comment(1, { path: 'a\nb.ts' })] });
    expect(text).toContain('### Comment 1 — "a\\nb.ts", lines 3-4');
  });

  it('stays within the byte bound, cutting at a comment boundary with the count of comments left out', () => {
    const comments = Array.from({ length: 10 }, (_, i) => comment(i + 1, { body: 'x'.repeat(300) }));
    const full = reviewText({ note: 'n', comments });
    expect(full.omitted).toBe(0);
    const max = 1500;
    const cut = reviewText({ note: 'n', comments }, { maxBytes: max });
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(max);
    expect(cut.included).toBeGreaterThan(0);
    expect(cut.included + cut.omitted).toBe(10);
    expect(cut.text).toMatch(
      new RegExp(`\\[${cut.omitted} more comments not included: the review is longer than 1500 bytes`),
    );
    // Every included comment is whole: its body ends right before the next block or the marker.
    for (let i = 1; i <= cut.included; i++) expect(cut.text).toContain(`Comment id: c${i}\n`);
    expect(cut.text).not.toContain(`Comment id: c${cut.included + 1}\n`);
    expect(cut.text.endsWith(']')).toBe(true);
  });

  it('the default bound is MAX_REVIEW_TEXT_BYTES, and the largest allowed comments trip it', () => {
    const big = 'é'.repeat(8000); // 16,000 bytes, the longest body allowed
    const out = reviewText({ note: big, comments: [comment(1, { body: big }), comment(2, { body: big })] });
    expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(MAX_REVIEW_TEXT_BYTES);
    expect(out.omitted).toBe(1);
    expect(out.text).toContain('[1 more comment not included');
  });

  it('a single comment longer than the budget is sent cut, and said so', () => {
    const out = reviewText({ note: '', comments: [comment(1, { body: 'y'.repeat(5000) })] }, { maxBytes: 1000 });
    expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(1000);
    expect(out.included).toBe(1);
    expect(out.text).toContain('[this comment is cut here');
  });

  it('a long selection is quoted up to the quote bound, the rest counted', () => {
    const lines = Array.from({ length: 50 }, (_, i) => `line ${i} ${'z'.repeat(40)}`);
    const out = reviewText({ note: '', comments: [comment(1, { lines })] }, { quoteBytes: 200 });
    expect(out.text).toContain('line 3 ');
    expect(out.text).not.toContain('line 4 ');
    expect(out.text).toContain('[46 more lines not quoted]');
  });
});
