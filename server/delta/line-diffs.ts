import type { PathKey } from '../paths/index.ts';
import { jsdiffLikelyFits, jsdiffLineDiff, jsdiffTrimmed, oneSidedDiff } from './hunks.ts';
import { MAX_MINIMAL_EDITS, trimmedKeepsMinimal } from './minimal-safe.ts';
import { middleCount, recordCount, trimEnds, type Records, type TrimmedPair } from './trim-ends.ts';
import type { DeltaInput, LineDiff } from './types.ts';

/**
 * Which engine diffs which file. git's answer is the truth (`git diff --numstat`); jsdiff answers
 * in process where it provably gives the same counts, the batch engine answers the rest in one
 * call, and what is still open goes to jsdiff or the per-file engine within the per-file budget.
 * A missing answer is `too_complex` for the caller.
 */

export interface DiffJob {
  key: PathKey;
  before: Buffer;
  after: Buffer;
}

export type DiffResults = Map<PathKey, LineDiff | null>;

/**
 * git's exact counts without a process where that is provable. The equal first and last records
 * are trimmed first (as git does). Lines inserted or removed in one block between them are changes
 * in every diff, git's included. Otherwise, when git's preprocessing cannot set aside a line a
 * minimal diff would keep and the edit is small enough for git's cost heuristics to stay off,
 * jsdiff's minimal diff of the part between the ends has git's counts. Null = ask git.
 */
export function provablyGitExact(before: Buffer, after: Buffer, budgetMs: number): LineDiff | null {
  const t = trimEnds(before, after);
  if (middleCount(t.a, t) === 0 || middleCount(t.b, t) === 0) return oneSidedDiff(t);
  if (!trimmedLikelyFits(t, budgetMs)) return null;
  if (!trimmedKeepsMinimal(t)) return null;
  const d = jsdiffTrimmed(t, budgetMs);
  return d && d.additions + d.deletions <= MAX_MINIMAL_EDITS ? d : null;
}

/** `jsdiffLikelyFits` on the part between the trimmed ends (the equal ends cost jsdiff nothing). */
function trimmedLikelyFits(t: TrimmedPair, budgetMs: number): boolean {
  const part = (r: Records) => r.bytes.subarray(r.starts[t.head], r.starts[recordCount(r) - t.tail]);
  return jsdiffLikelyFits(part(t.a), part(t.b), budgetMs);
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The in-process pass: records each provable answer in `results`. It hands the event loop back
 * every few milliseconds so git processes started just before (rename detection) make progress
 * meanwhile instead of waiting for this CPU work.
 */
export async function diffInProcess(jobs: DiffJob[], input: DeltaInput, results: DiffResults): Promise<void> {
  if (!input.batchDiff || input.exactHunks) return;
  let sliceStart = performance.now();
  for (const job of jobs) {
    if (results.has(job.key)) continue;
    const d = provablyGitExact(job.before, job.after, input.limits.diffTimeoutMs);
    if (d) results.set(job.key, d);
    if (performance.now() - sliceStart > 4) {
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
  }
}

/** Everything not answered yet: the batch engine, then jsdiff or the per-file engine, else null. */
export async function diffRemaining(jobs: DiffJob[], input: DeltaInput, results: DiffResults): Promise<void> {
  const budget = input.limits.diffTimeoutMs;
  const open = jobs.filter((j) => !results.has(j.key));
  if (input.batchDiff && open.length > 0) {
    try {
      const got = await input.batchDiff(
        open.map((j) => ({ before: j.before, after: j.after })),
        budget,
      );
      if (got.length === open.length) open.forEach((j, k) => got[k] && results.set(j.key, got[k]));
    } catch {
      /* the per-file engines below take over */
    }
  }
  for (const job of open) {
    if (results.get(job.key)) continue;
    // Each jsdiff may use its whole budget: let the server breathe between files.
    await yieldToEventLoop();
    let d: LineDiff | null = null;
    // Pick up front: jsdiff is O(lines x edits), hopeless for large rewrites that git does in ms.
    if (!input.fallbackDiff || jsdiffLikelyFits(job.before, job.after, budget))
      d = jsdiffLineDiff(job.before, job.after, budget);
    if (!d && input.fallbackDiff) {
      try {
        const f = await input.fallbackDiff(job.before, job.after, budget);
        if (f)
          d = {
            additions: f.additions,
            deletions: f.deletions,
            hunks: typeof f.hunks === 'string' ? Buffer.from(f.hunks, 'utf8') : f.hunks,
          };
      } catch {
        /* too_complex */
      }
    }
    results.set(job.key, d);
  }
}
