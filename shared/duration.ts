/**
 * One way to write how long something took, for the CLI's outcome line and the web UI alike:
 * `850 ms` under a second, `4.2 s` under a minute, `3 min 5 s`, `2 h 5 min`.
 */
export function formatDuration(ms: number): string {
  const rounded = Math.max(0, Math.round(ms));
  if (rounded < 1000) return `${rounded} ms`;
  if (rounded < 59_950) return `${(rounded / 1000).toFixed(1)} s`;
  const total = Math.round(rounded / 1000);
  const m = Math.floor(total / 60);
  const s = total % 60;
  if (m < 60) return s === 0 ? `${m} min` : `${m} min ${s} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${m % 60} min`;
}

/**
 * A duration as formatDuration writes it (and `0.3 s` as older outcome lines did), for a pattern
 * that reads one back.
 */
export const DURATION_PATTERN = String.raw`(?:\d+ ms|\d+(?:\.\d+)? s|\d+ min(?: \d+ s)?|\d+ h \d+ min)`;
