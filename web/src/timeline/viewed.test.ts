import { describe, expect, it } from 'vitest';
import { hiddenViewedText, shownIndex, shownPosition, viewedByChange, viewedCountText, viewedOf } from './viewed.ts';

describe('viewed rows by change', () => {
  it('groups the covered rows per change with ascending positions, each row once', () => {
    const map = viewedByChange([
      { change_id: 'run:b', file_id: 'f9', ord: 9 },
      { change_id: 'run:a', file_id: 'f1', ord: 1 },
      { change_id: 'run:b', file_id: 'f2', ord: 2 },
      { change_id: 'run:b', file_id: 'f2', ord: 2 },
    ]);
    expect(viewedOf(map, 'run:b')).toEqual({ ids: new Set(['f9', 'f2']), positions: [2, 9] });
    expect(viewedOf(map, 'run:a').positions).toEqual([1]);
    expect(viewedOf(map, 'run:none')).toEqual({ ids: new Set(), positions: [] });
  });
});

describe('a list without its hidden rows', () => {
  it('maps a shown index to its position past the hidden rows before it', () => {
    // positions 0..9, hidden 0, 3, 4, 9: shown are 1, 2, 5, 6, 7, 8
    const hidden = [0, 3, 4, 9];
    expect([0, 1, 2, 3, 4, 5].map((i) => shownPosition(hidden, i))).toEqual([1, 2, 5, 6, 7, 8]);
    expect(shownPosition([], 7)).toBe(7);
  });

  it('maps a position back to its shown index (a hidden one to the next shown row`s)', () => {
    const hidden = [0, 3, 4, 9];
    expect([1, 2, 5, 6, 7, 8].map((p) => shownIndex(hidden, p))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(shownIndex(hidden, 3)).toBe(2);
    expect(shownIndex([], 4)).toBe(4);
  });

  it('both directions agree over a long list with runs of hidden rows', () => {
    const hidden = [2, 3, 4, 10, 11, 50, 99];
    for (let i = 0; i < 100 - hidden.length; i++) {
      const p = shownPosition(hidden, i);
      expect(hidden).not.toContain(p);
      expect(shownIndex(hidden, p)).toBe(i);
    }
  });
});

describe('texts', () => {
  it('counts viewed files and hidden ones', () => {
    expect(viewedCountText(3, 12)).toBe('3 of 12 viewed');
    expect(hiddenViewedText(1)).toBe('1 viewed file hidden');
    expect(hiddenViewedText(2)).toBe('2 viewed files hidden');
  });
});
