import type { Json, JsonObject } from './json-file.ts';

/**
 * The `hooks` object Claude Code reads and Codex copied: event name -> groups of
 * `{matcher?, hooks: [handler]}`. rundiff's handlers are recognised by `isOurs`; adding first
 * removes any earlier ones (so installing twice leaves one set), removing drops groups and events
 * left empty.
 */
export interface HookGroup {
  matcher?: string;
  hooks: JsonObject[];
}

const asObject = (v: Json | undefined): JsonObject | null =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? v : null;

/** Removes rundiff's handlers; returns the new settings and how many handlers were removed. */
export function removeOurs(
  settings: JsonObject,
  isOurs: (h: JsonObject) => boolean,
): { settings: JsonObject; removed: number } {
  const hooks = asObject(settings.hooks);
  if (!hooks) return { settings, removed: 0 };
  let removed = 0;
  const nextHooks: JsonObject = {};
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) {
      nextHooks[event] = groups;
      continue;
    }
    const kept: Json[] = [];
    for (const g of groups) {
      const group = asObject(g);
      const handlers = group && Array.isArray(group.hooks) ? group.hooks : null;
      if (!group || !handlers) {
        kept.push(g);
        continue;
      }
      const rest = handlers.filter((h) => {
        const o = asObject(h);
        const ours = o !== null && isOurs(o);
        if (ours) removed++;
        return !ours;
      });
      if (rest.length === handlers.length) kept.push(g);
      else if (rest.length > 0) kept.push({ ...group, hooks: rest });
    }
    if (kept.length > 0 || groups.length === 0) nextHooks[event] = kept;
  }
  const next: JsonObject = { ...settings };
  if (Object.keys(nextHooks).length > 0) next.hooks = nextHooks;
  else delete next.hooks;
  return { settings: next, removed };
}

/** Adds one group per event (after removing earlier rundiff handlers). */
export function addOurs(
  settings: JsonObject,
  groups: Record<string, HookGroup>,
  isOurs: (h: JsonObject) => boolean,
): JsonObject {
  const { settings: clean } = removeOurs(settings, isOurs);
  const hooks: JsonObject = { ...(asObject(clean.hooks) ?? {}) };
  for (const [event, group] of Object.entries(groups)) {
    const existing = hooks[event];
    const list = Array.isArray(existing) ? existing : [];
    hooks[event] = [...list, group as unknown as JsonObject];
  }
  return { ...clean, hooks };
}

/** Whether any rundiff handler is present. */
export const hasOurs = (settings: JsonObject, isOurs: (h: JsonObject) => boolean): boolean =>
  removeOurs(settings, isOurs).removed > 0;
