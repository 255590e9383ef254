import { ref, watch, type Ref } from 'vue';

const choices = new Map<string, Ref<unknown>>();

/**
 * One choice shared by every component that asks for `key`, remembered in localStorage: read once
 * through `parse` (null when nothing is stored or storage is disabled), written back through
 * `format` on every change. With storage disabled the choice lasts for this page only.
 */
export function rememberedChoice<T>(
  key: string,
  parse: (stored: string | null) => T,
  format: (v: T) => string,
): Ref<T> {
  let choice = choices.get(key) as Ref<T> | undefined;
  if (!choice) {
    let stored: string | null = null;
    try {
      stored = localStorage.getItem(key);
    } catch {
      // storage disabled
    }
    const r = ref(parse(stored)) as Ref<T>;
    watch(r, (v) => {
      try {
        localStorage.setItem(key, format(v));
      } catch {
        // storage disabled: the choice lasts for this page only
      }
    });
    choices.set(key, r);
    choice = r;
  }
  return choice;
}

/** An on/off choice (stored as `true` / `false`, off unless stored on). */
export const rememberedSwitch = (key: string): Ref<boolean> => rememberedChoice(key, (s) => s === 'true', String);
