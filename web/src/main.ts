/// <reference types="vite/client" />
import { createPinia } from 'pinia';
import { createApp } from 'vue';
import App from './App.vue';
import { setTokenRequester } from './api/index.ts';
import { router } from './router.ts';
import { setSocketTokenRequester } from './socket/index.ts';
import { useAuthStore } from './stores/index.ts';
import './styles.css';

const app = createApp(App);
const pinia = createPinia();
app.use(pinia);
app.use(router);

// A 401 from REST or a refused socket handshake opens the one token prompt.
const auth = useAuthStore(pinia);
setTokenRequester((rejected) => auth.request(rejected));
setSocketTokenRequester(async (rejected) => {
  await auth.request(rejected);
});

app.mount('#app');
