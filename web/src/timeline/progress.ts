import type { DiffProgressPayload } from '../../../shared/index.ts';
import { moreFilesText, progressText } from './change-rows.ts';

/** Paths an open run's progress lists before `+N more files`. */
export const PROGRESS_PATHS_SHOWN = 5;

/** Why the live feed checks periodically instead of watching, in words (a tooltip). */
const POLL_WORDS: Record<string, string> = {
  watch_budget: 'the workspace has more folders than rundiff watches',
  watch_limit: 'the system ran out of file watches',
  watch_failed: 'the workspace could not be watched',
  too_many_events: 'files changed too fast to follow one by one',
  too_many_paths: 'the run touched too many files to follow one by one',
};

export interface ProgressView {
  /** `Working... 3 files touched`. */
  heading: string;
  /** The most recently touched paths first. */
  paths: string[];
  /** `+4 more files`, or null. */
  more: string | null;
  /** `checking every 3 s` while the feed checks periodically, else null. */
  pace: string | null;
  /** Why it checks periodically, for a tooltip; null while watching. */
  paceReason: string | null;
}

export function progressView(p: DiffProgressPayload, shown = PROGRESS_PATHS_SHOWN): ProgressView {
  const paths = p.touched.slice(0, shown);
  const polling = p.mode === 'poll';
  const seconds = Math.max(1, Math.round((p.check_interval_ms ?? 1_000) / 1_000));
  return {
    heading: progressText(p.touched_count),
    paths,
    more: moreFilesText(p.touched_count - paths.length),
    pace: polling ? `checking every ${seconds} s` : null,
    paceReason: polling
      ? `Checked periodically: ${p.reason ? (POLL_WORDS[p.reason] ?? p.reason.replace(/_/g, ' ')) : 'the workspace is not watched'}.`
      : null,
  };
}
