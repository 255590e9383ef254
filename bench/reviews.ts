import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createReviews } from '../server/review/index.ts';
import { silentEmitter } from '../server/runs/index.ts';
import { openStore, type NewChange, type NewFile } from '../server/store/index.ts';
import { median } from './stats.ts';

/**
 * Reading a session's review: `GET .../review` finds every comment again after the later changes of
 * its file. A session of 200 runs that each edit one file, 1,000 comments on the first run's lines
 * (all outdated by the later runs), on a real SQLite file. The baseline is listing the session's
 * changes (what the timeline reads); the first read after a write computes every placement, the
 * next ones are served from the placements kept until the session is written again.
 */

export interface ReviewsBenchResult {
  changes: number;
  comments: number;
  rounds: number;
  listChangesMs: number;
  firstReadMs: number;
  cachedReadMs: number;
  firstReadRatio: number;
}

const S = 'bench';

function change(n: number): { change: NewChange; file: NewFile } {
  const at = 10 + n;
  const patch = `diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -${at},3 +${at},3 @@\n line ${at - 1}\n-line ${at}\n+edited ${n}\n line ${at + 1}\n`;
  return {
    change: {
      change_id: `run:r${n}`,
      session_id: S,
      run_id: `r${n}`,
      tool_call_id: null,
      source: 'run',
      workspace: '/bench',
      workspace_kind: 'git',
      started_at: n * 10,
      finished_at: n * 10 + 5,
      changed_count: 1,
      added_count: 0,
      modified_count: 1,
      deleted_count: 0,
      renamed_count: 0,
      binary_count: 0,
      truncated: false,
      truncated_reasons: [],
      total_patch_bytes: patch.length,
      overlapping: false,
      omitted_count: 0,
      created_at: n * 10 + 5,
    },
    file: {
      path: 'f.txt',
      old_path: null,
      change_type: 'modified',
      additions: 1,
      deletions: 1,
      binary: false,
      truncated: false,
      size_before: 4000,
      size_after: 4000,
      patch_bytes: patch.length,
      omitted_reason: null,
      patch,
    },
  };
}

export async function benchReviews(opts: { changes?: number; comments?: number; rounds?: number } = {}) {
  const changes = opts.changes ?? 200;
  const comments = opts.comments ?? 1000;
  const rounds = opts.rounds ?? 5;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-reviews-'));
  const store = openStore(path.join(dir, 'rundiff.db'));
  try {
    await store.sessions.upsert(S, { workspace: '/bench' }, 1);
    for (let n = 0; n < changes; n++) {
      const c = change(n);
      await store.changes.insert(c.change, [c.file], changes + 1);
    }
    const reviews = createReviews({ store, emitter: silentEmitter });
    const fileId = (await store.changes.filesPage(S, 'run:r0', -1, 1))!.files[0]!.id;
    for (let i = 0; i < comments; i++)
      await reviews.createComment(S, {
        change_id: 'run:r0',
        file_id: fileId,
        side: 'after',
        start_line: 10 + (i % 3),
        end_line: 10 + (i % 3),
        body: `comment ${i}`,
      });
    const list: number[] = [];
    const first: number[] = [];
    const cached: number[] = [];
    for (let r = 0; r < rounds; r++) {
      let t = performance.now();
      await store.changes.listForSession(S);
      list.push(performance.now() - t);
      // Any write of the session drops the kept placements: the next read computes them all.
      await store.clock.bump(S);
      t = performance.now();
      const view = await reviews.view(S);
      first.push(performance.now() - t);
      if (view.comments.filter((c) => c.outdated).length !== comments)
        throw new Error('every comment must be outdated');
      t = performance.now();
      await reviews.view(S);
      cached.push(performance.now() - t);
    }
    const result: ReviewsBenchResult = {
      changes,
      comments,
      rounds,
      listChangesMs: median(list),
      firstReadMs: median(first),
      cachedReadMs: median(cached),
      firstReadRatio: median(first) / median(list),
    };
    return result;
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function formatReviewsBench(r: ReviewsBenchResult): string {
  return [
    `reviews: ${r.comments} comments over ${r.changes} later changes of their file, ${r.rounds} rounds (medians)`,
    `  list the session's changes (baseline): ${r.listChangesMs.toFixed(1)} ms`,
    `  GET review, first read after a write: ${r.firstReadMs.toFixed(1)} ms (${r.firstReadRatio.toFixed(1)}x the baseline)`,
    `  GET review, kept placements:          ${r.cachedReadMs.toFixed(1)} ms`,
  ].join('\n');
}
