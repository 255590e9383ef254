import { ref } from 'vue';
import type { SearchResponse } from '../../../shared/index.ts';
import { api, toApiError } from '../api/index.ts';

/**
 * One search box's answers from `GET /api/hermes/search`: the latest query's answer or its error
 * (a refused query says why, in the server's words); an older answer arriving late is dropped.
 */
export function useHistorySearch() {
  const answer = ref<SearchResponse | null>(null);
  const error = ref<string | null>(null);
  /** The query itself was refused (too short, bad syntax): a hint to show, not a failure. */
  const refused = ref(false);
  const loading = ref(false);
  let asked = 0;
  async function run(q: string, opts: { session?: string } = {}): Promise<void> {
    const mine = ++asked;
    if (q.trim() === '') {
      answer.value = null;
      error.value = null;
      refused.value = false;
      loading.value = false;
      return;
    }
    loading.value = true;
    try {
      const got = await api.search(q, opts);
      if (mine !== asked) return;
      answer.value = got;
      error.value = null;
      refused.value = false;
    } catch (err) {
      if (mine !== asked) return;
      const e = toApiError(err);
      answer.value = null;
      error.value = e.message;
      refused.value = e.code === 'invalid_input';
    } finally {
      if (mine === asked) loading.value = false;
    }
  }
  return { answer, error, refused, loading, run };
}
