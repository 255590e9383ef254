/**
 * Keeps a repeated condition to one log line: `says(key, what)` is true when the key is new or its
 * `what` changed, and again only after `remindMs` while it stays the same; `clear(key)` forgets it
 * (the condition ended; true when it was remembered, so its end can be said once too). At most
 * `max` keys are remembered (the oldest is forgotten first).
 */
export function saidOnce(now: () => number, remindMs: number, max = 1000) {
  const said = new Map<string, { what: string; at: number }>();
  return {
    says(key: string, what: string): boolean {
      const t = now();
      const had = said.get(key);
      if (had !== undefined && had.what === what && t - had.at < remindMs) return false;
      said.delete(key);
      said.set(key, { what, at: t });
      if (said.size > max) said.delete(said.keys().next().value!);
      return true;
    },
    clear(key: string): boolean {
      return said.delete(key);
    },
  };
}

/** How often a condition that goes on unchanged is mentioned again in the log. */
export const REMIND_MS = 60 * 60 * 1000;
