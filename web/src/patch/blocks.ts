import type { PatchRow } from './rows.ts';

/** Rows per block: a block is one `<tbody>`, rendered or not as a whole. */
export const BLOCK_ROWS = 100;

/** The rows cut into blocks of `size` (the last one shorter). */
export function splitBlocks(rows: readonly PatchRow[], size = BLOCK_ROWS): PatchRow[][] {
  const out: PatchRow[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/** The block each of `lineCount` lines is shown in (-1: in none, folded away), to re-render only that block. */
export function blockOfLines(blocks: readonly (readonly PatchRow[])[], lineCount: number): Int32Array {
  const map = new Int32Array(lineCount).fill(-1);
  blocks.forEach((block, b) => {
    for (const r of block) {
      if (r.kind === 'line') map[r.index] = b;
      else if (r.kind === 'pair') {
        if (r.left !== null) map[r.left] = b;
        if (r.right !== null) map[r.right] = b;
      }
    }
  });
  return map;
}

/** The distinct blocks that show any of `indices` (lines), in the order first met. */
export function blocksOfLines(map: Int32Array, indices: Iterable<number>): Set<number> {
  const out = new Set<number>();
  for (const i of indices) {
    const b = map[i] ?? -1;
    if (b >= 0) out.add(b);
  }
  return out;
}
