import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';
import { freePort } from '../e2e/ports.ts';

// `npm run bench:web`: the built UI on a real server with a fresh database, in Chromium.
// Not part of `npm test`.
const env = process.env;
env.RUNDIFF_BENCH_WEB_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-bench-web-'));
env.RUNDIFF_BENCH_WEB_PORT ??= freePort();

export default defineConfig({
  testDir: '.',
  testMatch: 'web.bench.ts',
  globalTeardown: './web-teardown.ts',
  workers: 1,
  retries: 0,
  timeout: 300_000,
  reporter: [['list']],
  outputDir: '../test-results/bench-web',
  use: {
    baseURL: `http://127.0.0.1:${env.RUNDIFF_BENCH_WEB_PORT}`,
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      executablePath: env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    },
  },
  webServer: {
    command: `node bin/rundiff.js serve --port ${env.RUNDIFF_BENCH_WEB_PORT} --db ${JSON.stringify(path.join(env.RUNDIFF_BENCH_WEB_DIR, 'bench.db'))}`,
    cwd: '..',
    url: `http://127.0.0.1:${env.RUNDIFF_BENCH_WEB_PORT}/api/health`,
    env: { RUNDIFF_TOKEN: '', RUNDIFF_WORKSPACE_ROOTS: '', RUNDIFF_HOST: '', RUNDIFF_PORT: '', RUNDIFF_DB: '' },
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
