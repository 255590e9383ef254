import { describe, expect, it } from 'vitest';
import { afterCheck, newestFirst, touchAll } from './touched-list.ts';

describe('touched paths in recency order', () => {
  it('a path touched again moves to the front of the newest-first list', () => {
    const list = new Set<string>();
    touchAll(list, ['a', 'b', 'c']);
    touchAll(list, ['a']);
    expect(newestFirst(list, 10)).toEqual(['a', 'c', 'b']);
  });

  it('the listing is bounded to the newest', () => {
    const list = new Set(['a', 'b', 'c', 'd']);
    expect(newestFirst(list, 2)).toEqual(['d', 'c']);
  });

  it('after a check: kept paths stay in place, reverted ones leave, new ones list first in path order', () => {
    const list = new Set(['x', 'y', 'z']);
    const next = afterCheck(list, ['z', 'b', 'x', 'a'], 100);
    expect(newestFirst(next, 100)).toEqual(['a', 'b', 'z', 'x']);
  });

  it('after a check the list holds at most the bound', () => {
    const next = afterCheck(new Set(), ['a', 'b', 'c', 'd'], 3);
    expect(next.size).toBe(3);
  });
});
