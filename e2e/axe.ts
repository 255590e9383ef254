import fs from 'node:fs';
import { createRequire } from 'node:module';
import { expect, type Page } from '@playwright/test';

// The page's own globals, for code inside page.evaluate (the root tsconfig has no DOM lib).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const axe: any, document: any;

const AXE_SCRIPT = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** Evaluated through the debugging protocol: the app's Content-Security-Policy refuses inline scripts. */
async function injectAxe(page: Page): Promise<void> {
  if (await page.evaluate(() => typeof axe !== 'undefined')) return;
  await page.evaluate(fs.readFileSync(AXE_SCRIPT, 'utf8'));
}

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary: string }[];
}

/** One readable line per failing element, so a failure names the rule, the element and the cause. */
function describe(violations: Violation[]): string[] {
  return violations.flatMap((v) =>
    v.nodes.map((n) => `${v.id} (${v.impact ?? 'n/a'}): ${v.help} at ${n.target.join(' ')}: ${n.failureSummary}`),
  );
}

/**
 * Runs axe-core (WCAG 2 A/AA rules and axe's best practices) on the page as it is now, limited to
 * `selector` when given, and requires zero violations.
 */
export async function expectNoAxeViolations(page: Page, selector?: string): Promise<void> {
  await injectAxe(page);
  const violations = (await page.evaluate(
    async (include) =>
      (await axe.run(include ?? document, { resultTypes: ['violations'] })).violations.map((v: Violation) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
      })),
    selector ?? null,
  )) as Violation[];
  expect(describe(violations)).toEqual([]);
}

/** Counts violations without asserting: the positive control that the check can fail at all. */
export async function axeViolationCount(page: Page): Promise<number> {
  await injectAxe(page);
  return page.evaluate(async () => (await axe.run(document, { resultTypes: ['violations'] })).violations.length);
}
