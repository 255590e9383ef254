import path from 'node:path';
import type { Page } from '@playwright/test';

/** One rule axe-core found broken, with the selectors of the nodes that break it. */
export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

const AXE = path.resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js');

/**
 * Runs axe-core (WCAG 2.x A and AA rules) on the page as it is and answers what it finds. The page's
 * context needs `bypassCSP: true`: the app's Content-Security-Policy refuses an injected script.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    type Result = { violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] };
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<Result> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')),
    }));
  });
}
