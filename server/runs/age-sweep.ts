import type { RecorderContext } from './context.ts';

/** The age sweep: changes stored more than `retentionDays` ago are removed; returns how many. */
export function sweepOld(ctx: RecorderContext): Promise<number> {
  const cutoff = ctx.now() - ctx.config.limits.retentionDays * 24 * 60 * 60 * 1000;
  return ctx.store.changes.deleteOlderThan(cutoff);
}
