import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

/** Asks the OS for a free port (synchronously: the config is not async). */
function freePort(): string {
  return execFileSync(
    process.execPath,
    [
      '-e',
      "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})",
    ],
    { encoding: 'utf8' },
  ).trim();
}

// This file is evaluated by the runner and again by every worker: the runner's choices reach the
// workers through the environment, so all of them talk to the same servers.
const env = process.env;
env.RUNDIFF_E2E_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-e2e-'));
env.RUNDIFF_E2E_PORT ??= freePort();
env.RUNDIFF_E2E_LIMITS_PORT ??= freePort();
env.RUNDIFF_E2E_TOKEN_PORT ??= freePort();
env.RUNDIFF_E2E_TOKEN ??= `e2e-${Math.random().toString(36).slice(2)}`;
const dir = env.RUNDIFF_E2E_DIR;

/** Settings a developer's shell may carry that must not leak into the test servers. */
const clean = {
  RUNDIFF_TOKEN: '',
  RUNDIFF_WORKSPACE_ROOTS: '',
  RUNDIFF_HOST: '',
  RUNDIFF_PORT: '',
  RUNDIFF_DB: '',
  RUNDIFF_REQUIRE_COMMIT_APPROVAL: '',
};

function server(port: string, db: string, extraEnv: Record<string, string> = {}) {
  return {
    command: `node bin/rundiff.js serve --port ${port} --db ${JSON.stringify(path.join(dir, db))}`,
    url: `http://127.0.0.1:${port}/api/health`,
    env: { ...clean, ...extraEnv },
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
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: [
    server(env.RUNDIFF_E2E_PORT, 'main.db'),
    // Tiny limits, to see capped, truncated and binary rows.
    server(env.RUNDIFF_E2E_LIMITS_PORT, 'limits.db', {
      RUNDIFF_MAX_CHANGED_FILES: '3',
      RUNDIFF_MAX_FILE_PATCH_BYTES: '200',
    }),
    server(env.RUNDIFF_E2E_TOKEN_PORT, 'token.db', { RUNDIFF_TOKEN: env.RUNDIFF_E2E_TOKEN }),
  ],
});
