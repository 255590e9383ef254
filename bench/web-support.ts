import fs from 'node:fs';
import path from 'node:path';
import type { Page } from '@playwright/test';
import * as prettier from 'prettier';

const PERFORMANCE_DOC = path.resolve(import.meta.dirname, '..', 'docs', 'performance.md');

/**
 * Writes a benchmark's report as its section of docs/performance.md: replaces the section headed
 * `section` (up to the next `## `), or adds it at the end; the page is left formatted by prettier.
 */
export async function writePerformanceSection(section: string, report: string): Promise<void> {
  const doc = fs.readFileSync(PERFORMANCE_DOC, 'utf8');
  const start = doc.indexOf(`\n${section}\n`);
  let next: string;
  if (start < 0) next = `${doc.trimEnd()}\n\n${report}`;
  else {
    const after = doc.slice(start + 1 + section.length).search(/^## /m);
    next = doc.slice(0, start + 1) + report + (after < 0 ? '' : `\n${doc.slice(start + 1 + section.length + after)}`);
  }
  const options = (await prettier.resolveConfig(PERFORMANCE_DOC)) ?? {};
  fs.writeFileSync(PERFORMANCE_DOC, await prettier.format(next, { ...options, parser: 'markdown' }));
}

/** Posts one bridge event to a running server (the web benchmarks seed their sessions this way). */
export async function post(base: string, event: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${base}/api/bridge/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(event),
  });
  if (!res.ok) throw new Error(`${String(event.type)}: ${res.status} ${await res.text()}`);
}

// Browser globals, for code that runs in the page (the root tsconfig has no DOM lib on purpose).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any, PerformanceObserver: any;

/**
 * Collects the page's long tasks into `window.longTasks` ({start, duration}) from its first script
 * on; a benchmark reads them back inside its own `page.evaluate`.
 */
export async function recordLongTasks(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as { longTasks: { start: number; duration: number }[] };
    w.longTasks = [];
    type Entry = { startTime: number; duration: number };
    new PerformanceObserver((list: { getEntries(): Entry[] }) => {
      for (const e of list.getEntries()) w.longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: 'longtask', buffered: true });
  });
}
