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
export const usageLine = (u: RunUsage | null): string | null => usageText(u, 'tokens in');

/** The same, short, for a table cell: `12.3k in · 1.2k out · $0.42`. */
export const usageCell = (u: RunUsage | null): string | null => usageText(u, 'in');

function usageText(u: RunUsage | null, inWord: string): string | null {
  if (u === null) return null;
  const money = u.cost_usd !== undefined ? ` · ${dollars(u.cost_usd)}` : '';
  return `${shortTokens(u.input + u.cache_read + u.cache_write)} ${inWord} · ${shortTokens(u.output)} out${money}`;
}

/**
 * US dollars as a person reads a bill: cents from a cent up ($0.42, $12.30, $1,234.50), two
 * significant digits below ($0.0042), `<$0.000001` for less. Never rounded to a misleading $0.00.
 */
export function dollars(usd: number): string {
  if (usd >= 0.01) return `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  if (usd < 0.000001) return '<$0.000001';
  return `$${usd.toPrecision(2).replace(/0+$/, '')}`;
}

/** The four figures (and the price) as the agent reported them, for the line's title. */
export function usageDetail(u: RunUsage): string {
  const f = (n: number) => n.toLocaleString('en-US');
  const money =
    u.cost_usd !== undefined ? `; $${u.cost_usd.toPrecision(6).replace(/\.?0+$/, '')} as priced by the agent` : '';
  return `Input ${f(u.input)} · output ${f(u.output)} · cache read ${f(u.cache_read)} · cache write ${f(u.cache_write)} tokens, as the agent reported them${money}`;
}
