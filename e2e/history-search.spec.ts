import type { Page } from '@playwright/test';
import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, servers, test, uid, workspace } from './support.ts';

const base = servers.main;

/**
 * A session whose run changed 80 files (more than the 50 rows a change block shows first): the
 * last one, far past the first page, gets a unique word on its line 3, next to markup that must
 * stay text. The prompt holds the word too.
 */
async function recorded(word: string): Promise<{ sid: string; late: string }> {
  const files: Record<string, string> = {};
  for (let i = 0; i < 80; i++) files[`f${String(i).padStart(3, '0')}.txt`] = 'one\ntwo\nthree\nfour\n';
  const ws = workspace(files);
  const sid = uid('search');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Search me', workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: 'r1', workspace: ws.dir });
  await bridge(base, {
    type: 'message',
    session_id: sid,
    run_id: 'r1',
    role: 'user',
    content: `rename ${word} please`,
  });
  for (let i = 0; i < 80; i++) ws.write(`f${String(i).padStart(3, '0')}.txt`, `one\ntwo\nthree ${i}\nfour\n`);
  const late = 'f079.txt';
  ws.write(late, `one\ntwo\n<b>${word}</b> here\nfour\n`);
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: 'r1' });
  return { sid, late };
}

/** The focused gutter button of a patch line (where a followed link lands). */
const lineButton = (page: Page, side: string, line: number) =>
  page.locator(`button.cgut[data-side="${side}"][data-line="${line}"]`);

test('the sessions list searches patches and prompts; a hit opens its file at its line', async ({ page }) => {
  const word = uid('needle').replace(/[^a-z0-9]/gi, '');
  const { sid, late } = await recorded(word);
  await page.goto(`${base}/`);
  await page.getByTestId('session-search').fill(word);
  const hits = page.getByTestId('history-search').getByTestId('search-hit');
  await expect(hits).toHaveCount(2);
  const patch = hits.and(page.locator('[data-kind="patch"]'));
  await expect(patch.getByTestId('search-hit-place')).toHaveText(`${late} line 3 (new)`);
  // The snippet is text: the file's markup shows as characters, the word is marked.
  const snippet = patch.getByTestId('search-snippet');
  await expect(snippet).toHaveText(`+<b>${word}</b> here`);
  await expect(snippet.locator('b')).toHaveCount(0);
  await expect(snippet.locator('mark')).toHaveText(word);
  await expect(hits.and(page.locator('[data-kind="prompt"]')).getByTestId('search-snippet')).toHaveText(
    `rename ${word} please`,
  );

  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expectNoAxeViolations(page);
  }

  await patch.getByTestId('search-hit-link').click();
  await expect(page).toHaveURL(
    new RegExp(`/sessions/${encodeURIComponent(sid)}\\?change=run(:|%3A)r1&file=.+&side=after&line=3$`),
  );
  await expect(lineButton(page, 'after', 3)).toBeFocused();
  await expect(page.getByTestId('change-row').filter({ hasText: late })).toHaveCount(1);
});

test('find in session reaches a row past the first page and opens its line in place', async ({ page }) => {
  const word = uid('deep').replace(/[^a-z0-9]/gi, '');
  const { sid, late } = await recorded(word);
  await openSession(page, base, sid);
  // Positive control: the file is not among the rows the block shows at first.
  await expect(page.getByTestId('change-row').filter({ hasText: late })).toHaveCount(0);

  await page.getByTestId('session-find-toggle').click();
  await expect(page.getByTestId('session-find-input')).toBeFocused();
  await page.getByTestId('session-find-input').fill(`${word} kind:patch`);
  await page.getByTestId('session-find-input').press('Enter');
  const hits = page.getByTestId('session-find').getByTestId('search-hit');
  await expect(hits).toHaveCount(1);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expectNoAxeViolations(page);
  }
  await hits.getByTestId('search-hit-link').click();
  await expect(page).toHaveURL(/side=after&line=3$/);
  await expect(page.getByTestId('change-row').filter({ hasText: late })).toHaveCount(1);
  await expect(lineButton(page, 'after', 3)).toBeFocused();

  // A bad query says why, in the server's words.
  await page.getByTestId('session-find-input').fill('"open');
  await page.getByTestId('session-find-input').press('Enter');
  await expect(page.getByTestId('session-find-error')).toContainText('no closing quote');
});
