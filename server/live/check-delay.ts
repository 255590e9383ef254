/**
 * The pause before the next periodic check of a run's changed paths, from what the last check
 * cost: checks together take at most `maxShare` of wall time (each of `sharers` polling runs gets
 * its part), never run more often than `minIntervalMs`, and never wait longer than `maxIntervalMs`.
 */
export interface CheckDelayOptions {
  /** Shortest pause between two checks of one run (ms). Default 1,000. */
  minIntervalMs: number;
  /** Longest pause (ms), however slow the checks are. Default 60,000. */
  maxIntervalMs: number;
  /** Share of wall time all checks together may take (0..1). Default 0.1. */
  maxShare: number;
}

export const DEFAULT_CHECK_DELAY: Readonly<CheckDelayOptions> = Object.freeze({
  minIntervalMs: 1_000,
  maxIntervalMs: 60_000,
  maxShare: 0.1,
});

export function nextCheckDelayMs(costMs: number, sharers: number, o: CheckDelayOptions = DEFAULT_CHECK_DELAY): number {
  // A check of cost c followed by a pause p uses c / (c + p) of one run's time; with n runs polling
  // at once, each keeps to maxShare / n so that together they stay within maxShare.
  const share = o.maxShare / Math.max(1, sharers);
  const pause = (Math.max(0, costMs) * (1 - share)) / share;
  return Math.round(Math.min(o.maxIntervalMs, Math.max(o.minIntervalMs, pause)));
}
