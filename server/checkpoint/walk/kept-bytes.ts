import type { Checkpoint } from '../model.ts';

/**
 * What the walk keeps on its checkpoints: where the kept bytes of each row live when some of them
 * are another checkpoint's (held-contents.ts shares a held checkpoint's bytes instead of copying
 * them). Null when every kept byte is in the checkpoint's own block.
 */
export interface WalkState {
  /** Blocks of other checkpoints this one refers to (they stay alive as long as it does). */
  shared: readonly Buffer[];
  /** Per row: 0 = its bytes are in the checkpoint's own block, k > 0 = in `shared[k - 1]`. */
  from: Uint8Array;
}

export type WalkCheckpoint = Checkpoint<WalkState | null>;

type KeptIn = Pick<WalkCheckpoint, 'files' | 'block' | 'state'>;

/** The block that holds row `i`'s kept bytes (at its `snapOffset`): the checkpoint's own or a shared one. */
export function blockOf(cp: KeptIn, i: number): Buffer {
  const k = cp.state?.from[i] ?? 0;
  return k === 0 ? cp.block : cp.state!.shared[k - 1]!;
}

/** The kept bytes of row `i` (origin snapshot), wherever they live. */
export function keptBytes(cp: KeptIn, i: number): Buffer {
  const f = cp.files;
  return blockOf(cp, i).subarray(f.snapOffset[i], f.snapOffset[i]! + f.snapLength[i]!);
}
