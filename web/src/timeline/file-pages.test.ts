import { describe, expect, it } from 'vitest';
import type { FileSummary } from '../../../shared/index.ts';
import {
  applyRows,
  failedText,
  pageRequest,
  pagesToLoad,
  retryFailed,
  showAllText,
  startPages,
  type FilePages,
} from './file-pages.ts';

const file = (i: number): FileSummary => ({
  id: `f${i}`,
  path: `src/f${String(i).padStart(3, '0')}.txt`,
  old_path: null,
  change_type: 'modified',
  additions: 1,
  deletions: 1,
  binary: false,
  truncated: false,
  size_before: 4,
  size_after: 4,
  patch_bytes: 40,
  omitted_reason: null,
});
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => file(a + i));

/** A 300-file change as the session detail brings it: the first 50 rows and the count. */
const detail300 = (): FilePages => startPages({ files: range(0, 50), files_total: 300 }, 100);

describe('file pages', () => {
  it('starts from the summary: its first rows present, the rest to fetch', () => {
    const s = detail300();
    expect(s).toMatchObject({ total: 300, loaded: 50 });
    expect(s.rows).toHaveLength(300);
    expect(s.rows[49]?.id).toBe('f49');
    expect(s.rows[50]).toBeUndefined();
    // A summary with every row (no cursor) has nothing to fetch.
    const whole = startPages({ files: range(0, 3) }, 100);
    expect(whole.total).toBe(3);
    expect(pagesToLoad(whole, 0, 3)).toEqual([]);
  });

  it('asks for the missing part of a page by position: the first page resumes after the summary rows', () => {
    const s = detail300();
    expect(pageRequest(s, 0)).toEqual({ after: 49, limit: 50 });
    expect(pageRequest(s, 2)).toEqual({ after: 199, limit: 100 });
    applyRows(s, 49, range(50, 100));
    expect(pageRequest(s, 0)).toBeNull();
    expect(s.loaded).toBe(100);
  });

  it('fetches the pages a viewport needs, nearest first, at most two at a time, never one pending or failed', () => {
    const s = detail300();
    expect(pagesToLoad(s, 0, 30)).toEqual([]);
    expect(pagesToLoad(s, 20, 130)).toEqual([0, 1]);
    // Jumping to the end fetches the last page, not the pages in between.
    expect(pagesToLoad(s, 280, 300)).toEqual([2]);
    s.pending.add(2);
    expect(pagesToLoad(s, 280, 300)).toEqual([]);
    expect(pagesToLoad(s, 0, 300)).toEqual([0]);
    s.pending.add(0);
    expect(pagesToLoad(s, 0, 300)).toEqual([]);
    s.pending.clear();
    s.failed.set(1, 'The server answered 500');
    expect(pagesToLoad(s, 100, 200)).toEqual([]);
    expect(failedText(s)).toBe('Could not load files 101-200: The server answered 500');
    retryFailed(s);
    expect(pagesToLoad(s, 100, 200)).toEqual([1]);
    expect(failedText(s)).toBeNull();
  });

  it('names the first failed page and counts the others', () => {
    const s = detail300();
    s.failed.set(2, 'gone');
    s.failed.set(1, 'The rundiff server cannot be reached.');
    expect(failedText(s)).toBe('Could not load files 101-200 (and 1 more page): The rundiff server cannot be reached.');
    const first = detail300();
    first.failed.set(0, 'gone');
    expect(failedText(first)).toBe('Could not load files 51-100: gone');
  });

  it('keeps rows already present and ignores rows past the total', () => {
    const s = detail300();
    const other = { ...file(10), id: 'other' };
    applyRows(s, 9, [other, file(11)]);
    expect(s.rows[10]?.id).toBe('f10');
    applyRows(s, 298, [file(299), file(300)]);
    expect(s.rows[299]?.id).toBe('f299');
    expect(s.rows).toHaveLength(300);
    expect(s.loaded).toBe(51);
  });

  it('reads "Show all N files", and says "stored" when the row bound left paths out', () => {
    expect(showAllText(300, 0)).toBe('Show all 300 files');
    expect(showAllText(100000, 20)).toBe('Show all 100000 stored files');
  });
});
