import type { RunUsage } from '../../../shared/index.ts';

/** A token count, short: 950, 12.3k, 1.2M (one decimal below 100 of its unit). */
export function shortTokens(n: number): string {
  const unit = (v: number, suffix: string) =>
    `${v < 100 ? (Math.floor(v * 10) / 10).toString() : Math.floor(v)}${suffix}`;
  if (n < 1000) return String(n);
  if (n < 1_000_000) return unit(n / 1000, 'k');
  return unit(n / 1_000_000, 'M');
}

/**
 * The tokens of a run (or session) in a line: what the model read (its input, whether or not
 * from the prompt cache) and what it wrote. Null when the agent reported none: nothing is shown.
 */
export function usageLine(u: RunUsage | null): string | null {
  if (u === null) return null;
  return `${shortTokens(u.input + u.cache_read + u.cache_write)} tokens in · ${shortTokens(u.output)} out`;
}

/** The four figures as the agent reported them, for the line's title. */
export function usageDetail(u: RunUsage): string {
  const f = (n: number) => n.toLocaleString('en-US');
  return `Input ${f(u.input)} · output ${f(u.output)} · cache read ${f(u.cache_read)} · cache write ${f(u.cache_write)} tokens, as the agent reported them`;
}
