import { ref, type Ref } from 'vue';
import { useRouter } from 'vue-router';
import { api, toApiError } from '../api/index.ts';

/** Starts the server's scripted demo (or joins the one playing) and opens its session to watch it live. */
export function useDemo(): { starting: Ref<boolean>; error: Ref<string | null>; play(): Promise<void> } {
  const router = useRouter();
  const starting = ref(false);
  const error = ref<string | null>(null);
  return {
    starting,
    error,
    async play() {
      starting.value = true;
      error.value = null;
      try {
        const { session_id } = await api.startDemo();
        await router.push({ name: 'session', params: { id: session_id } });
      } catch (err) {
        error.value = toApiError(err).message;
      } finally {
        starting.value = false;
      }
    },
  };
}
