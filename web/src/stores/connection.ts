import { defineStore } from 'pinia';
import { ref } from 'vue';
import { onConnectionState, type ConnectionState } from '../socket/index.ts';

/** Whether live updates are flowing (shown in the header). */
export const useConnectionStore = defineStore('connection', () => {
  const state = ref<ConnectionState>('connecting');
  onConnectionState((s) => {
    state.value = s;
  });
  return { state };
});
