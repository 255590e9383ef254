import { describe, expect, it } from 'vitest';
import { blockOfLines, blocksOfLines, splitBlocks } from './blocks.ts';
import { parsePatch } from './lines.ts';
import { buildRows } from './rows.ts';

// 250 changed line pairs after a hunk header: 251 unified rows, 251 split rows (header + pairs).
const lines = parsePatch(
  [
    '@@ -1,250 +1,250 @@',
    ...Array.from({ length: 250 }, (_, i) => `-old ${i}`),
    ...Array.from({ length: 250 }, (_, i) => `+new ${i}`),
  ].join('\n'),
);

describe('blocks of a long patch', () => {
  it('cuts the rows into blocks of a size, the last one shorter', () => {
    const blocks = splitBlocks(buildRows(lines, 'unified', new Set()), 100);
    expect(blocks.map((b) => b.length)).toEqual([100, 100, 100, 100, 100, 1]);
    expect(splitBlocks([], 100)).toEqual([]);
  });

  it('knows the block each line is shown in, in either layout', () => {
    const unified = blockOfLines(splitBlocks(buildRows(lines, 'unified', new Set()), 100), lines.length);
    expect([unified[1], unified[99], unified[100], unified[500]]).toEqual([0, 0, 1, 5]);
    const split = blockOfLines(splitBlocks(buildRows(lines, 'split', new Set()), 100), lines.length);
    // A pair row holds a deletion and its addition: both in the pair's block.
    expect([split[1], split[251], split[100], split[350]]).toEqual([0, 0, 1, 1]);
  });

  it('names each block showing some lines once, and none for a line not shown', () => {
    const map = blockOfLines(splitBlocks(buildRows(lines, 'unified', new Set()), 100), lines.length);
    expect([...blocksOfLines(map, [1, 2, 150, 3, 450])]).toEqual([0, 1, 4]);
    // A line index past the rows (a line folded away has no block either) names no block.
    expect([...blocksOfLines(map, [9999])]).toEqual([]);
  });
});
