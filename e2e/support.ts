import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { test as base, expect, type Page, type Request } from '@playwright/test';
import type { BridgeEvent } from '../shared/index.ts';
import { createTempRepo, type TempRepo } from '../server/test-support/temp-repo.ts';

/**
 * Playwright's `test` with one more check on every test: an error the page throws and nothing
 * catches, or one it reports on the console (a component failing as it mounts, say), fails the test
 * even when what it asserts still shows up.
 */
const BROWSER_NETWORK_LINE = /^(Failed to load resource|WebSocket connection to '[^']*' failed)/;

export const test = base.extend<{ uncaughtPageErrors: void }>({
  uncaughtPageErrors: [
    async ({ page }, use) => {
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.stack ?? e.message));
      // Vue reports an error thrown in a component, a watcher or a handler on the console rather
      // than throwing it to the page. The browser's own lines for failed requests and refused
      // socket connections are left out: several tests answer errors or stop the server on purpose
      // and check what the page says.
      page.on('console', (m) => {
        if (m.type() === 'error' && !BROWSER_NETWORK_LINE.test(m.text())) errors.push(m.text());
      });
      await use();
      expect(errors, 'errors thrown in the page and not caught').toEqual([]);
    },
    { auto: true },
  ],
});
export { expect };

/** The three servers started by playwright.config.ts (ports chosen there, shared via the environment). */
export const servers = {
  main: `http://127.0.0.1:${process.env.RUNDIFF_E2E_PORT}`,
  limits: `http://127.0.0.1:${process.env.RUNDIFF_E2E_LIMITS_PORT}`,
  token: `http://127.0.0.1:${process.env.RUNDIFF_E2E_TOKEN_PORT}`,
};
export const serverToken = process.env.RUNDIFF_E2E_TOKEN ?? '';

let counter = 0;
/** `rundiff run` against an e2e server (the shared one unless named), as a user runs it. */
export function rundiffRun(
  args: string[],
  cwd: string,
  server: string = servers.main,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.resolve('bin/rundiff.js'), 'run', '--server', server, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

/** An id unique across workers and runs. */
export function uid(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${(counter++).toString(36)}`;
}

/**
 * Posts one event to the real bridge and returns its JSON answer (fails the test on an error status).
 * Each post opens its own connection: a test that blocks its own event loop (writing thousands of
 * files) cannot close a pooled keep-alive connection in time, and would reuse one the server has
 * just closed ("other side closed").
 */
export async function bridge(base: string, event: BridgeEvent, token?: string): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const body = JSON.stringify(event);
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      `${base}/api/bridge/events`,
      { method: 'POST', agent: false, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  expect(status, `${event.type} answered ${status}: ${text}`).toBe(200);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A real git workspace with committed files, removed by `cleanup()`. */
export function workspace(files: Record<string, string | Buffer>): TempRepo {
  return createTempRepo({ files });
}

/** Opens a session page and waits until its detail is shown and its live subscription is acknowledged. */
export async function openSession(page: Page, base: string, sessionId: string): Promise<void> {
  await page.goto(`${base}/sessions/${encodeURIComponent(sessionId)}`);
  const timeline = page.getByTestId('timeline');
  await expect(timeline).toHaveAttribute('data-loaded', 'true');
  await expect(timeline).toHaveAttribute('data-subscribed', 'true');
}

/** The keys of the timeline's items in order (`message:<id>`, `run:<id>`, `tool:<id>`, `outcome:<id>`). */
export async function timelineKeys(page: Page): Promise<string[]> {
  return page
    .getByTestId('timeline')
    .locator(':scope > li')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-key') ?? ''));
}

/** Records every request for one file's patch (`.../files/:fileId`). */
export function recordPatchRequests(page: Page): Request[] {
  const seen: Request[] = [];
  page.on('request', (r) => {
    // `.../files/:fileId` only: not a page of rows, not the file's recorded contents.
    if (/\/workspace-run-changes\/[^/]+\/files\/[^/]+$/.test(new URL(r.url()).pathname)) seen.push(r);
  });
  return seen;
}

/** A row of a change block, by the file path it shows. */
export function row(page: Page, changeId: string, path: string) {
  return page.locator(
    `[data-testid="change-block"][data-change-id="${changeId}"] [data-testid="change-row"][data-path="${cssEscape(path)}"]`,
  );
}

function cssEscape(s: string): string {
  return s.replace(/["\\]/g, '\\$&');
}

/** A row as the design document writes it: `M src/Login.vue +12 -4`. */
export async function rowText(rowLocator: ReturnType<typeof row>): Promise<string> {
  const parts = await Promise.all(
    ['change-row-letter', 'change-row-path', 'change-row-stats'].map((id) => rowLocator.getByTestId(id).innerText()),
  );
  return parts.map((p) => p.replace(/\s+/g, ' ').trim()).join(' ');
}

/** All rows of one change block, as text. */
export async function blockRows(page: Page, changeId: string): Promise<string[]> {
  const rows = page.locator(`[data-testid="change-block"][data-change-id="${changeId}"] [data-testid="change-row"]`);
  const out: string[] = [];
  for (let i = 0; i < (await rows.count()); i++) out.push(await rowText(rows.nth(i)));
  return out;
}

/** `line 1\n...line n\n`. */
export function lines(n: number, prefix = 'line'): string {
  return Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}\n`).join('');
}

/** A server of the spec's own (for stopping and restarting it), on a free port with a fresh database. */
export interface OwnServer {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function ownServer(dbPath: string, env: Record<string, string> = {}): Promise<OwnServer> {
  const { spawn } = await import('node:child_process');
  const net = await import('node:net');
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  let child: ReturnType<typeof spawn> | null = null;
  const start = async () => {
    child = spawn(process.execPath, ['bin/rundiff.js', 'serve', '--port', String(port), '--db', dbPath], {
      env: { ...process.env, RUNDIFF_TOKEN: '', RUNDIFF_WORKSPACE_ROOTS: '', ...env },
      stdio: 'ignore',
    });
    for (let i = 0; i < 200; i++) {
      try {
        if ((await fetch(`${url}/api/health`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`server on ${url} did not start`);
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGTERM');
    });
  };
  await start();
  return { url, start, stop };
}
