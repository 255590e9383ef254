import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

/** Asks the OS for a free port, synchronously (Playwright configs are not async). */
export function freePort(): string {
  return execFileSync(
    process.execPath,
    [
      '-e',
      "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close()})",
    ],
    { encoding: 'utf8' },
  ).trim();
}

/** Debian's Chromium, with the flags that keep it off this machine's closed network. */
export const chromiumLaunchOptions = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};

/** Settings a developer's shell may carry that must not leak into a test server. */
export const cleanServerEnv: Record<string, string> = {
  RUNDIFF_TOKEN: '',
  RUNDIFF_WORKSPACE_ROOTS: '',
  RUNDIFF_HOST: '',
  RUNDIFF_PORT: '',
  RUNDIFF_DB: '',
  RUNDIFF_REQUIRE_COMMIT_APPROVAL: '',
};

export interface SingleServerOptions {
  /** Prefix of the environment variables that carry the chosen folder and port to the workers. */
  envPrefix: string;
  testDir: string;
  testMatch: string;
  globalTeardown: string;
  outputDir: string;
  timeout: number;
  expectTimeout?: number;
  viewport?: { width: number; height: number };
}

/**
 * A Playwright config with one real server on a fresh database, for the scripts outside `npm test`
 * (`bench:web`, `screenshots`). The config is evaluated by the runner and again by every worker:
 * the runner's folder and port reach the workers through the environment.
 */
export function singleServerConfig(o: SingleServerOptions) {
  const env = process.env;
  const dirVar = `${o.envPrefix}_DIR`;
  const portVar = `${o.envPrefix}_PORT`;
  env[dirVar] ??= fs.mkdtempSync(path.join(os.tmpdir(), `${o.envPrefix.toLowerCase().replace(/_/g, '-')}-`));
  env[portVar] ??= freePort();
  const port = env[portVar];
  return {
    config: defineConfig({
      testDir: o.testDir,
      testMatch: o.testMatch,
      globalTeardown: o.globalTeardown,
      workers: 1,
      retries: 0,
      timeout: o.timeout,
      ...(o.expectTimeout ? { expect: { timeout: o.expectTimeout } } : {}),
      reporter: [['list']],
      outputDir: o.outputDir,
      use: {
        baseURL: `http://127.0.0.1:${port}`,
        browserName: 'chromium',
        headless: true,
        ...(o.viewport ? { viewport: o.viewport } : {}),
        launchOptions: chromiumLaunchOptions,
      },
      webServer: {
        command: `node bin/rundiff.js serve --port ${port} --db ${JSON.stringify(path.join(env[dirVar], 'server.db'))}`,
        cwd: '..',
        url: `http://127.0.0.1:${port}/api/health`,
        env: cleanServerEnv,
        reuseExistingServer: false,
        timeout: 60_000,
        stdout: 'ignore',
        stderr: 'pipe',
      },
    }),
    /** The server's temporary folder (its database lives there). */
    dir: env[dirVar],
  };
}
