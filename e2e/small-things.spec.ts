import type { Page } from '@playwright/test';
import { expectNoAxeViolations } from './axe.ts';
import {
  bridge,
  expect,
  openSession,
  row,
  rundiffRun,
  servers,
  test,
  timelineKeys,
  uid,
  workspace,
} from './support.ts';

const base = servers.main;

test("a failed command's exit line has one label and one duration", async ({ page }) => {
  const ws = workspace({ 'a.txt': 'a\n' });
  const sid = uid('exit');
  try {
    const res = await rundiffRun(['--session', sid, '--', 'sh', '-c', 'echo b > a.txt; exit 3'], ws.dir);
    expect(res.code).toBe(3);
    expect(res.stderr).toContain(`rundiff: ${base}/sessions/${sid}`);
    await openSession(page, base, sid);
    const marker = page.getByTestId('run-marker');
    await expect(marker.getByTestId('run-label')).toHaveText('Run failed');
    await expect(marker.getByTestId('run-error')).toHaveText(/^exit 3 in (\d+ ms|\d+\.\d s)$/);
    // The outcome is said once: no "Assistant" reply repeats it.
    await expect(page.locator('[data-testid="message"][data-role="assistant"]')).toHaveCount(0);
    // Positive control: the command line the user typed is still shown.
    await expect(page.locator('[data-testid="message"][data-role="user"]')).toContainText('exit 3');
    const durations = (await marker.innerText()).match(/\d+(\.\d+)? (ms|s)\b/g) ?? [];
    expect(durations).toHaveLength(1);
  } finally {
    ws.cleanup();
  }
});

test('two overlapping commands: each block follows its own run and is named by its id', async ({ page }) => {
  const ws = workspace({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  const sid = uid('overlap');
  try {
    // The first command waits for a file (in .git, outside what is tracked) the test writes once the
    // second command has started and ended: the two runs overlap however slow the machine is.
    const waitThenEdit = 'until [ -e .git/go ];do sleep .1;done;echo a>a.txt';
    const first = rundiffRun(['--session', sid, '--', 'sh', '-c', waitThenEdit], ws.dir);
    await expect
      .poll(
        async () => ((await (await fetch(`${base}/api/hermes/sessions/${sid}`)).json()) as { runs?: [] }).runs?.length,
      )
      .toBe(1);
    expect((await rundiffRun(['--session', sid, '--', 'sh', '-c', 'echo b2 > b.txt'], ws.dir)).code).toBe(0);
    ws.write('.git/go', '');
    expect((await first).code).toBe(0);

    const detail = (await (await fetch(`${base}/api/hermes/sessions/${sid}`)).json()) as {
      runs: { run_id: string; started_at: number }[];
    };
    const [a, b] = [...detail.runs].sort((x, y) => x.started_at - y.started_at).map((r) => r.run_id);
    await openSession(page, base, sid);
    const keys = await timelineKeys(page);
    // Each block right after its own marker (the commands have no reply shown), not both after the second.
    expect(keys.filter((k) => !k.startsWith('message:'))).toEqual([
      `run:${a}`,
      `outcome:${a}`,
      `run:${b}`,
      `outcome:${b}`,
    ]);
    expect(keys.indexOf(`outcome:${a}`)).toBe(keys.indexOf(`run:${a}`) + 1);
    expect(keys.indexOf(`outcome:${b}`)).toBe(keys.indexOf(`run:${b}`) + 1);

    const block = (id: string) => page.locator(`[data-testid="change-block"][data-change-id="run:${id}"]`);
    const marker = (id: string) => page.locator(`[data-testid="run-marker"][data-run-id="${id}"]`);
    // Each block names its own run (the command line is the message above that run, shown once).
    await expect(block(a!).getByTestId('change-owner')).toHaveText(`Run ${a!.slice(0, 8)}`);
    await expect(block(b!).getByTestId('change-owner')).toHaveText(`Run ${b!.slice(0, 8)}`);
    await expect(block(a!).getByTestId('change-owner')).toHaveAttribute('title', new RegExp(`\\.git/go`));
    // The marker shows the same short id the block names.
    await expect(marker(a!).getByTestId('run-id')).toHaveText(a!.slice(0, 8));
    await expect(marker(b!).getByTestId('run-id')).toHaveText(b!.slice(0, 8));
    await expect(marker(a!).getByTestId('run-id')).toHaveAttribute('title', `run ${a}`);
  } finally {
    ws.cleanup();
  }
});

test('a fast failure and a fast success write their durations the same way (ms under a second)', async ({ page }) => {
  const ws = workspace({ 'a.txt': 'a\n' });
  const sid = uid('fast');
  try {
    expect((await rundiffRun(['--session', sid, '--', 'sh', '-c', 'exit 3'], ws.dir)).code).toBe(3);
    expect((await rundiffRun(['--session', sid, '--', 'true'], ws.dir)).code).toBe(0);
    await openSession(page, base, sid);
    const failed = page.locator('[data-testid="run-marker"][data-status="failed"]');
    const completed = page.locator('[data-testid="run-marker"][data-status="completed"]');
    // `sh -c 'exit 3'` takes well under a second: `exit 3 in 12 ms`, not `exit 3 in 0.0 s`.
    await expect(failed.getByTestId('run-error')).toHaveText(/^exit 3 in \d{1,3} ms$/);
    await expect(completed.getByTestId('run-label')).toHaveText(/^Run completed in (\d{1,3} ms|\d+\.\d s)$/);
  } finally {
    ws.cleanup();
  }
});

test("a change block's Revert button sits inside the block's padding, lined up with its heading", async ({ page }) => {
  const { ws, change } = await twoFileRun(page);
  try {
    const block = page.locator(`[data-testid="change-block"][data-change-id="${change}"]`);
    const blockBox = (await block.boundingBox())!;
    const revertBox = (await block.getByTestId('revert-button').first().boundingBox())!;
    const headingBox = (await block.getByTestId('change-collapse').boundingBox())!;
    // Not on the block's left border: as far in as the heading.
    expect(revertBox.x - blockBox.x).toBeGreaterThanOrEqual(8);
    expect(Math.abs(revertBox.x - headingBox.x)).toBeLessThanOrEqual(1);
  } finally {
    ws.cleanup();
  }
});

test('? on the sessions list shows the shortcuts that work there, and says where the patch ones apply', async ({
  page,
}) => {
  await page.goto(`${base}/`);
  await expect(page.getByTestId('sessions-page')).toHaveAttribute('data-live', 'true');
  await page.locator('body').press('?');
  const dialog = page.getByTestId('shortcuts-dialog');
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText('In Search: search at once');
  await expect(dialog).toContainText('Cancel a delete question');
  await expect(dialog).not.toContainText('Next changed file');
  await expect(dialog.getByTestId('shortcuts-note')).toHaveText(
    "The file and patch shortcuts (j, k, v, …) work on a session's page.",
  );
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  // On a session's page the file and patch shortcuts are listed, without the note.
  const { ws } = await twoFileRun(page);
  try {
    await page.locator('body').press('?');
    await expect(dialog).toContainText('Next changed file');
    await expect(dialog.getByTestId('shortcuts-note')).toHaveCount(0);
  } finally {
    ws.cleanup();
  }
});

async function twoFileRun(page: Page) {
  const ws = workspace({ 'a.txt': 'one\ntwo\n', 'b.txt': 'three\n' });
  const sid = uid('keys');
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Keys', workspace: ws.dir });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: 'r1' });
  ws.write('a.txt', 'one\n2\n');
  ws.write('b.txt', 'three\nfour\n');
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: 'r1' });
  await openSession(page, base, sid);
  return { ws, change: 'run:r1' };
}

test('? shows the keyboard shortcuts; Escape closes them and gives the focus back', async ({ page }) => {
  const { ws, change } = await twoFileRun(page);
  try {
    const first = row(page, change, 'a.txt').getByTestId('change-row-button');
    await first.focus();
    await page.keyboard.press('?');
    const dialog = page.getByTestId('shortcuts-dialog');
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText('Next changed file');
    await expect(page.getByTestId('shortcuts-close')).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    await expect(first).toBeFocused();
    // Typed into a field, ? is just a character.
    await page.goto(`${base}/`);
    await page.getByTestId('session-search').fill('');
    await page.getByTestId('session-search').press('?');
    await expect(page.getByTestId('shortcuts-dialog')).toBeHidden();
    await expect(page.getByTestId('session-search')).toHaveValue('?');
  } finally {
    ws.cleanup();
  }
});

test('j inside an open patch moves to the next file, not back to the first row on screen', async ({ page }) => {
  const { ws, change } = await twoFileRun(page);
  try {
    const a = row(page, change, 'a.txt');
    await a.getByTestId('change-row-button').click();
    await expect(a.getByTestId('patch')).toBeVisible();
    // Focus somewhere inside the open patch: its layout toggle.
    await a.getByTestId('layout-split').focus();
    await page.keyboard.press('j');
    await expect(row(page, change, 'b.txt').getByTestId('change-row-button')).toBeFocused();
    await page.keyboard.press('k');
    await expect(a.getByTestId('change-row-button')).toBeFocused();
  } finally {
    ws.cleanup();
  }
});

test('dark theme: the pressed layout button and line numbers of added and removed rows pass contrast', async ({
  page,
}) => {
  await page.emulateMedia({ colorScheme: 'dark' });
  const { ws, change } = await twoFileRun(page);
  try {
    const a = row(page, change, 'a.txt');
    await a.getByTestId('change-row-button').click();
    await expect(a.getByTestId('patch')).toBeVisible();
    await expectNoAxeViolations(page, '[data-testid="layout-unified"]');
    await expectNoAxeViolations(page, '[data-testid="patch"] td.ln');
    await a.getByTestId('layout-split').click();
    await expectNoAxeViolations(page, '[data-testid="layout-split"]');
    await expectNoAxeViolations(page, '[data-testid="patch"] td.ln');
  } finally {
    ws.cleanup();
  }
});
