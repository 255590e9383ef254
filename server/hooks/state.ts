import { initialHookState, type HookSessionState } from './types.ts';

/** The most agent sessions whose hook state is kept; the least recently used is dropped first. */
export const MAX_HOOK_SESSIONS = 1_000;

/**
 * Each agent session's mapping state, in memory and bounded. Losing a state (a restart, or the
 * session dropped as the least recently used) costs little: the next prompt starts a new run, and a
 * tool call outside a known prompt opens one. A dropped session is handed to `onEvict` with its last
 * state, so what it had open can be closed (nothing else would close it).
 */
export function createHookStateStore(
  maxSessions = MAX_HOOK_SESSIONS,
  onEvict: (key: string, state: HookSessionState) => void = () => {},
) {
  const states = new Map<string, HookSessionState>();
  return {
    get: (key: string): HookSessionState => states.get(key) ?? initialHookState(),
    set(key: string, state: HookSessionState): void {
      // Re-inserting moves the key to the end, so the map's order is the order of last use.
      states.delete(key);
      states.set(key, state);
      while (states.size > maxSessions) {
        const [oldest, last] = states.entries().next().value!;
        states.delete(oldest);
        onEvict(oldest, last);
      }
    },
    has: (key: string): boolean => states.has(key),
    get size() {
      return states.size;
    },
  };
}
export type HookStateStore = ReturnType<typeof createHookStateStore>;
