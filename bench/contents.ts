import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { DEFAULT_LIMITS } from '../server/config.ts';
import type { DeltaFile, FileSide } from '../server/delta/index.ts';
import { fillContents, prepareContents, recordContents } from '../server/runs/contents.ts';
import { toNewFile } from '../server/runs/index.ts';
import { openStore, type NewChange, type Store } from '../server/store/index.ts';
import { median } from './stats.ts';
import { storedChange } from '../server/test-support/store-fixtures.ts';

/**
 * The content store's cost at completion: storing a change's rows alone (the baseline, as before
 * undo existed) against rows plus contents (hash, compress, write), on a real SQLite file, for a
 * change of 200 modified text files (16 KiB each) and 20 binary ones (64 KiB random). Interleaved
 * rounds, medians; plus the stored bytes against the raw bytes.
 */

export interface ContentsBenchResult {
  rounds: number;
  rowsOnlyMs: number;
  withContentsMs: number;
  ratio: number;
  rawBytes: number;
  storedBytesPerChange: number;
  /** The longest the main thread was blocked while a change with contents was stored. */
  longestBlockMs: number;
}

function side(bytes: Buffer): FileSide {
  return { bytes, size: bytes.length, mode: '100644' };
}

function files(round: number): { files: DeltaFile[]; raw: number } {
  const out: DeltaFile[] = [];
  let raw = 0;
  const text = (i: number, tag: string) =>
    Buffer.from(Array.from({ length: 400 }, (_, l) => `${tag} file ${i} line ${l} of round ${round}\n`).join(''));
  for (let i = 0; i < 220; i++) {
    const binary = i >= 200;
    const before = binary ? randomBytes(64 * 1024) : text(i, 'before');
    const after = binary ? randomBytes(64 * 1024) : text(i, 'after');
    raw += before.length + after.length;
    const p = `f${String(i).padStart(3, '0')}.${binary ? 'bin' : 'txt'}`;
    out.push({
      path: p,
      old_path: null,
      path_key: p,
      old_path_key: null,
      change_type: 'modified',
      additions: 400,
      deletions: 400,
      binary,
      truncated: false,
      size_before: before.length,
      size_after: after.length,
      patch: binary ? null : `diff --git a/${p} b/${p}\n`,
      patch_bytes: 0,
      omitted_reason: binary ? 'binary' : null,
      sides: { before: side(before), after: side(after) },
    });
  }
  return { files: out, raw };
}

function change(sessionId: string, changeId: string): NewChange {
  return storedChange(sessionId, changeId, Date.now(), {
    change_id: changeId,
    workspace: '/bench',
    started_at: 0,
    finished_at: 0,
    changed_count: 220,
    added_count: 0,
    modified_count: 220,
    binary_count: 20,
    total_patch_bytes: 0,
  });
}

async function storeOnce(store: Store, id: string, delta: DeltaFile[], withContents: boolean): Promise<number> {
  const t0 = performance.now();
  const contents = withContents ? await prepareContents(delta, DEFAULT_LIMITS.maxContentFileBytes) : [];
  const pending = await store.transaction(async (tx) => {
    await tx.sessions.touch('bench', 1);
    await tx.changes.insert(change('bench', id), delta.map(toNewFile), 1_000_000);
    return withContents ? recordContents(tx, { sessionId: 'bench', changeId: id }, contents, () => {}) : [];
  });
  await fillContents(store, DEFAULT_LIMITS, { sessionId: 'bench', changeId: id, now: 1 }, pending, () => {});
  return performance.now() - t0;
}

export async function benchContents(rounds = 7): Promise<ContentsBenchResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-contents-'));
  const store = openStore(path.join(dir, 'bench.db'));
  try {
    const rowsOnly: number[] = [];
    const withContents: number[] = [];
    let raw = 0;
    const loop = monitorEventLoopDelay({ resolution: 5 });
    for (let r = 0; r < rounds; r++) {
      const a = files(r);
      rowsOnly.push(await storeOnce(store, `run:rows-${r}`, a.files, false));
      const b = files(r + rounds);
      raw = b.raw;
      loop.enable();
      withContents.push(await storeOnce(store, `run:contents-${r}`, b.files, true));
      loop.disable();
    }
    const rowsOnlyMs = median(rowsOnly);
    const withContentsMs = median(withContents);
    return {
      rounds,
      rowsOnlyMs,
      withContentsMs,
      ratio: withContentsMs / rowsOnlyMs,
      rawBytes: raw,
      storedBytesPerChange: (await store.contents.stats(DEFAULT_LIMITS.contentStoreMaxBytes)).bytes_used / rounds,
      longestBlockMs: loop.max / 1e6,
    };
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function formatContentsBench(r: ContentsBenchResult): string {
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return [
    `content store: a change of 200 text files (16 KiB) + 20 binary (64 KiB), median of ${r.rounds} rounds`,
    `  rows only ${r.rowsOnlyMs.toFixed(1)} ms; rows + contents ${r.withContentsMs.toFixed(1)} ms (x${r.ratio.toFixed(1)})`,
    `  contents ${mib(r.rawBytes)} raw -> ${mib(r.storedBytesPerChange)} stored per change; longest main-thread block ${r.longestBlockMs.toFixed(1)} ms`,
  ].join('\n');
}
