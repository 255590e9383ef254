import { defineStore } from 'pinia';
import { ref } from 'vue';
import { setToken } from '../api/index.ts';
import { reconnectSocket } from '../socket/index.ts';

/** The token prompt: shown when the server answers 401; one answer serves every waiting request. */
export const useAuthStore = defineStore('auth', () => {
  const prompting = ref(false);
  /** True when a token was sent and refused (the prompt says so). */
  const rejected = ref(false);
  let waiters: ((token: string) => void)[] = [];

  function request(wasRejected: boolean): Promise<string> {
    rejected.value = rejected.value || wasRejected;
    prompting.value = true;
    return new Promise((resolve) => waiters.push(resolve));
  }

  function submit(token: string): void {
    const t = token.trim();
    if (t === '') return;
    setToken(t);
    prompting.value = false;
    rejected.value = false;
    const w = waiters;
    waiters = [];
    for (const resolve of w) resolve(t);
    reconnectSocket();
  }

  return { prompting, rejected, request, submit };
});
