import type { Limits } from '../../shared/index.ts';
import type { CheckpointWatchOptions, ListingHow } from '../checkpoint/strategy.ts';
import type { CheckpointEngine } from '../checkpoint/types.ts';
import { resolved, rows, testEngine } from './engine-harness.ts';

/**
 * Two engines on one folder, one with the checkpoint watcher (how it listed or walked each phase
 * told) and one without, and runs recorded on both: the watcher's tests compare their rows. The
 * engines go into `engines`, which the test file closes after each test.
 */
export function watchedPair(
  engines: CheckpointEngine[],
  opts: Partial<CheckpointWatchOptions> = {},
  limits: Partial<Limits> = {},
) {
  const told: ListingHow[] = [];
  const on = testEngine(limits, { watch: { ...opts, told: (_root, how) => told.push(how) } });
  const off = testEngine(limits, { watch: false });
  engines.push(on, off);
  let seq = 0;
  /** One run on both engines: their rows, and how the watched engine looked at the folder. */
  const run = async (dir: string, act: () => void | Promise<void>) => {
    const id = `c${++seq}`;
    const ws = await resolved(dir);
    const from = told.length;
    await on.start({ sessionId: 's', changeId: id, runId: id, workspace: ws });
    await off.start({ sessionId: 's', changeId: id, runId: id, workspace: ws });
    await act();
    const watched = (await on.complete('s', id))!;
    const plain = (await off.complete('s', id))!;
    return { watched: rows(watched), plain: rows(plain), how: told.slice(from), delta: watched, unwatched: plain };
  };
  return { run, told, on };
}

export type WatchedRun = ReturnType<typeof watchedPair>['run'];

export const isWatched = (how: ListingHow): boolean => 'watched' in how;
export const whole = (how: ListingHow): string | null => ('whole' in how ? how.whole : null);

/** Runs until the watcher vouches (the first phases are whole: it starts after the first). */
export async function warm(run: WatchedRun, dir: string): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const r = await run(dir, () => undefined);
    if (r.how.every(isWatched)) return;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error('the watcher never vouched');
}
