import { onScopeDispose, ref, type Ref } from 'vue';

/** The current time, refreshed every `everyMs`, for "5 min ago" labels. */
export function useNow(everyMs = 30_000): Ref<number> {
  const now = ref(Date.now());
  const timer = setInterval(() => {
    now.value = Date.now();
  }, everyMs);
  onScopeDispose(() => clearInterval(timer));
  return now;
}
