import { defineConfig } from 'vite';
import vue from '@vitejs/plugin-vue';

// The web UI lives in web/; `npm run build` writes dist/web, which the server serves at `/`.
export default defineConfig({
  root: 'web',
  plugins: [vue()],
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    chunkSizeWarningLimit: 600,
  },
  server: {
    proxy: {
      '/api': 'http://127.0.0.1:7420',
      '/socket.io': { target: 'ws://127.0.0.1:7420', ws: true },
    },
  },
});
