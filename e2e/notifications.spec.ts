import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from '@playwright/test';
import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, ownServer, test, uid, workspace, type OwnServer } from './support.ts';

// Browser globals, for code inside evaluate and init scripts (the root tsconfig has no DOM lib).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any, document: any;

/**
 * A server of this file's own: the tab's count covers every session the server has, so runs that
 * other specs end on the shared server at the same time would count too.
 */
let server: OwnServer;
let dir = '';
let base = '';
test.beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-e2e-notify-'));
  server = await ownServer(path.join(dir, 'notify.db'));
  base = server.url;
});
test.afterAll(async () => {
  await server.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * Notifications in Chromium: permission granted to the page's origin, the page's real
 * `Notification` kept, each one it shows also noted in `window.shownNotices` so the test can read
 * what the person would see. "Not looking" is another tab of the same window brought to the front
 * (headless Chromium keeps a page behind another "visible", but takes its focus).
 */
async function watchedPage(context: BrowserContext): Promise<Page> {
  await context.grantPermissions(['notifications'], { origin: base });
  await context.addInitScript(() => {
    const Real = window.Notification;
    window.shownNotices = [];
    class Noted extends Real {
      constructor(title: string, options?: { body?: string }) {
        super(title, options);
        window.shownNotices.push({ title, body: options?.body ?? '' });
      }
    }
    Object.defineProperty(Noted, 'permission', { get: () => Real.permission });
    Noted.requestPermission = () => Real.requestPermission();
    window.Notification = Noted;
  });
  const page = await context.newPage();
  await page.goto(base);
  // Playwright tells every page it has the focus; without that, a page behind another tab loses it.
  await (await context.newCDPSession(page)).send('Emulation.setFocusEmulationEnabled', { enabled: false });
  await expect(page.getByTestId('connection')).toHaveAttribute('data-state', 'live');
  return page;
}

const notices = (page: Page) => page.evaluate(() => window.shownNotices as { title: string; body: string }[]);
/** The "N running" flag of a session's row in the list: shown once the page knows the run started. */
const running = (page: Page, sid: string) =>
  page.locator(`[data-testid="session-row"][data-session-id="${sid}"] [data-testid="session-running-runs"]`);
const looking = (page: Page) => page.evaluate(() => document.visibilityState === 'visible' && document.hasFocus());

async function runningSession(title: string) {
  const ws = workspace({ 'a.txt': 'a\n' });
  const sid = uid('notify');
  const run = uid('r');
  await bridge(base, { type: 'session.upsert', session_id: sid, title, workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
  return { ws, sid, run };
}

test('opted in, a run that ends while the tab is behind another shows a notification and a count in the title', async ({
  context,
}) => {
  const page = await watchedPage(context);
  const toggle = page.getByTestId('nav-notify');
  await expect(toggle).toHaveAttribute('aria-pressed', 'false');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-pressed', 'true');
  await expect(toggle).toHaveText('Notifications on');

  const { ws, sid, run } = await runningSession('Notify me when done');
  const other = await context.newPage();
  try {
    await other.goto(`${base}/tools`);
    await other.bringToFront();
    await expect.poll(() => looking(page)).toBe(false);
    // The list has seen the run start before it ends.
    await expect(running(page, sid)).toBeVisible();
    ws.write('a.txt', 'b\n');
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
    await expect
      .poll(() => notices(page))
      .toContainEqual({
        title: 'A run finished · Notify me when done',
        body: `Notify me when done in ${ws.dir}`,
      });
    await expect(page).toHaveTitle('(1) rundiff');

    // A failed run and a commit approval count too.
    const failing = await runningSession('Failing');
    await expect(running(page, failing.sid)).toBeVisible();
    await bridge(base, { type: 'run.failed', session_id: failing.sid, run_id: failing.run, error: 'exit 1' });
    await expect.poll(() => notices(page)).toContainEqual(expect.objectContaining({ title: 'A run failed · Failing' }));
    await expect(page).toHaveTitle('(2) rundiff');
    failing.ws.cleanup();

    // Looking at the page again clears the count.
    await page.bringToFront();
    await expect.poll(() => looking(page)).toBe(true);
    await expect(page).toHaveTitle('rundiff');
  } finally {
    await other.close();
    ws.cleanup();
  }
});

test('while the page is in front nothing is shown or counted; turned off, a hidden tab gets only the count', async ({
  context,
}) => {
  const page = await watchedPage(context);
  await page.getByTestId('nav-notify').click();
  await expect(page.getByTestId('nav-notify')).toHaveAttribute('aria-pressed', 'true');
  await expect.poll(() => looking(page)).toBe(true);
  const first = await runningSession('In front');
  await expect(running(page, first.sid)).toBeVisible();
  await bridge(base, { type: 'run.completed', session_id: first.sid, run_id: first.run });
  await expect(running(page, first.sid)).toHaveCount(0);
  expect(await notices(page)).toEqual([]);
  await expect(page).toHaveTitle('rundiff');

  await page.getByTestId('nav-notify').click();
  await expect(page.getByTestId('nav-notify')).toHaveAttribute('aria-pressed', 'false');
  const second = await runningSession('Behind, notifications off');
  await expect(running(page, second.sid)).toBeVisible();
  const other = await context.newPage();
  try {
    await other.goto(`${base}/tools`);
    await other.bringToFront();
    await expect.poll(() => looking(page)).toBe(false);
    await bridge(base, { type: 'run.completed', session_id: second.sid, run_id: second.run });
    await expect(page).toHaveTitle('(1) rundiff');
    expect(await notices(page)).toEqual([]);
  } finally {
    await other.close();
    first.ws.cleanup();
    second.ws.cleanup();
  }
});

test('notifications the browser blocks are said, and the toggle stays off', async ({ browser }) => {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(base);
    // No permission granted: headless Chromium answers the request with "denied".
    await page.getByTestId('nav-notify').click();
    await expect(page.getByTestId('nav-notify-problem')).toContainText('Notifications are blocked for this page');
    await expect(page.getByTestId('nav-notify')).toHaveAttribute('aria-pressed', 'false');
  } finally {
    await context.close();
  }
});

for (const scheme of ['light', 'dark'] as const) {
  test(`the notifications toggle is accessible in the ${scheme} theme, on and off`, async ({ context }) => {
    const page = await watchedPage(context);
    await page.emulateMedia({ colorScheme: scheme });
    await expectNoAxeViolations(page, 'header.app-bar');
    await page.getByTestId('nav-notify').click();
    await expect(page.getByTestId('nav-notify')).toHaveAttribute('aria-pressed', 'true');
    await expectNoAxeViolations(page, 'header.app-bar');
  });
}
