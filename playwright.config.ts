import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions, cleanServerEnv, freePort } from './e2e/test-servers.ts';

// This file is evaluated by the runner and again by every worker: the runner's choices reach the
// workers through the environment, so all of them talk to the same servers.
const env = process.env;
env.RUNDIFF_E2E_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-e2e-'));
env.RUNDIFF_E2E_PORT ??= freePort();
env.RUNDIFF_E2E_LIMITS_PORT ??= freePort();
env.RUNDIFF_E2E_TOKEN_PORT ??= freePort();
env.RUNDIFF_E2E_TOKEN ??= `e2e-${Math.random().toString(36).slice(2)}`;
const dir = env.RUNDIFF_E2E_DIR;

function server(port: string, db: string, extraEnv: Record<string, string> = {}) {
  return {
    command: `node bin/rundiff.js serve --port ${port} --db ${JSON.stringify(path.join(dir, db))}`,
    url: `http://127.0.0.1:${port}/api/health`,
    env: { ...cleanServerEnv, ...extraEnv },
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'ignore' as const,
    stderr: 'pipe' as const,
    gracefulShutdown: { signal: 'SIGTERM' as const, timeout: 5_000 },
  };
}

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  globalTeardown: './e2e/global-teardown.ts',
  fullyParallel: false,
  workers: 2,
  retries: 0,
  timeout: 30_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    baseURL: `http://127.0.0.1:${env.RUNDIFF_E2E_PORT}`,
    browserName: 'chromium',
    headless: true,
    // A trace of every test (DOM snapshots and a screencast) costs about a sixth of the browser
    // run's CPU (measured: 111-116 CPU-s against 92 for four spec files), and is rarely opened:
    // `RUNDIFF_E2E_TRACE=1` records one and keeps it for the tests that fail.
    trace: env.RUNDIFF_E2E_TRACE === '1' ? 'retain-on-failure' : 'off',
    launchOptions: chromiumLaunchOptions,
  },
  webServer: [
    server(env.RUNDIFF_E2E_PORT, 'main.db'),
    // Tiny limits, to see capped, truncated and binary rows.
    server(env.RUNDIFF_E2E_LIMITS_PORT, 'limits.db', {
      RUNDIFF_MAX_CHANGED_FILES: '3',
      RUNDIFF_MAX_FILE_PATCH_BYTES: '200',
      // A patch opened from the kept contents is bounded too: a cut one still says so.
      RUNDIFF_MAX_OPENED_PATCH_BYTES: '1000',
    }),
    server(env.RUNDIFF_E2E_TOKEN_PORT, 'token.db', { RUNDIFF_TOKEN: env.RUNDIFF_E2E_TOKEN }),
  ],
});
