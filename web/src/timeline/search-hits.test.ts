import { describe, expect, it } from 'vitest';
import type { SearchHit } from '../../../shared/index.ts';
import { hitKindLabel, hitPlace, hitQuery, snippetParts } from './search-hits.ts';

const hit = (extra: Partial<SearchHit>): SearchHit => ({
  kind: 'patch',
  session_id: 's',
  session_title: null,
  run_id: 'r1',
  run_status: 'completed',
  tool_call_id: null,
  message_id: null,
  change_id: 'run:r1',
  file_id: 'f1',
  path: 'src/a.ts',
  line: 3,
  side: 'after',
  at: 1,
  snippet: '+x',
  matches: [],
  ...extra,
});

describe('search hits', () => {
  it('cuts a snippet at its matches, marks them, and keeps every character', () => {
    expect(
      snippetParts('+const <b>x</b> = 1', [
        { start: 7, end: 10 },
        { start: 15, end: 16 },
      ]),
    ).toEqual([
      { text: '+const ', mark: false },
      { text: '<b>', mark: true },
      { text: 'x</b>', mark: false },
      { text: ' ', mark: true },
      { text: '= 1', mark: false },
    ]);
    // Out of range or overlapping offsets never drop or repeat text.
    const odd = snippetParts('abcdef', [
      { start: 2, end: 4 },
      { start: 3, end: 99 },
    ]);
    expect(odd.map((p) => p.text).join('')).toBe('abcdef');
    expect(snippetParts('', [{ start: 0, end: 3 }])).toEqual([]);
  });

  it('a patch hit opens its file at its line; a message hit opens the session', () => {
    expect(hitQuery(hit({}))).toEqual({ change: 'run:r1', file: 'f1', side: 'after', line: '3' });
    expect(hitQuery(hit({ kind: 'path', line: null, side: null }))).toEqual({ change: 'run:r1', file: 'f1' });
    expect(hitQuery(hit({ kind: 'prompt', change_id: null, file_id: null, path: null }))).toEqual({});
    expect(hitPlace(hit({ side: 'before', line: 9 }))).toBe('src/a.ts line 9 (old)');
    expect(hitPlace(hit({ kind: 'prompt', path: null }))).toBeNull();
  });

  it("names a run's own title apart from its session's", () => {
    expect(hitKindLabel(hit({ kind: 'title', run_id: 'r1', path: null }))).toBe('Run title');
    expect(hitKindLabel(hit({ kind: 'title', run_id: null, path: null }))).toBe('Title');
    expect(hitKindLabel(hit({}))).toBe('Patch');
  });
});
