import type { BackgroundJob } from './runner.ts';

/** How often the live feed looks for runs whose checkpoint expired (ms). */
const LIVE_FEED_SWEEP_MS = 60_000;

/** Closes the live feed of runs whose checkpoint the TTL sweep dropped (they will never complete). */
export function liveFeedSweepJob(feed: { sweep(): void }, intervalMs = LIVE_FEED_SWEEP_MS): BackgroundJob {
  return { name: 'live-feed-sweep', intervalMs, run: () => feed.sweep() };
}
