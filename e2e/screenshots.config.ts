import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';
import { freePort } from './ports.ts';

// `npm run screenshots`: one real server with a fresh database; the spec plays the demo through it
// and writes docs/screenshots/*.png. Not part of `npm test`.
const env = process.env;
env.RUNDIFF_SHOTS_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-shots-'));
env.RUNDIFF_SHOTS_PORT ??= freePort();

export default defineConfig({
  testDir: 'screenshots',
  testMatch: '**/*.shot.ts',
  globalTeardown: './screenshots/teardown.ts',
  workers: 1,
  retries: 0,
  timeout: 120_000,
  expect: { timeout: 30_000 },
  reporter: [['list']],
  outputDir: '../test-results/screenshots',
  use: {
    baseURL: `http://127.0.0.1:${env.RUNDIFF_SHOTS_PORT}`,
    browserName: 'chromium',
    headless: true,
    launchOptions: {
      executablePath: env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    },
  },
  webServer: {
    command: `node bin/rundiff.js serve --port ${env.RUNDIFF_SHOTS_PORT} --db ${JSON.stringify(path.join(env.RUNDIFF_SHOTS_DIR, 'shots.db'))}`,
    cwd: '..',
    url: `http://127.0.0.1:${env.RUNDIFF_SHOTS_PORT}/api/health`,
    env: { RUNDIFF_TOKEN: '', RUNDIFF_WORKSPACE_ROOTS: '', RUNDIFF_HOST: '', RUNDIFF_PORT: '', RUNDIFF_DB: '' },
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});
