import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, row, rundiffRun, servers, test, uid, workspace } from './support.ts';

const base = servers.main;

/** How often `text` occurs in the timeline's visible text. */
async function occurrences(page: import('@playwright/test').Page, text: string): Promise<number> {
  return (await page.getByTestId('timeline').innerText()).split(text).length - 1;
}

test("a `rundiff run` run shows its command line once: above its run, not again in its block's label", async ({
  page,
}) => {
  const ws = workspace({ 'a.txt': 'a\n' });
  const sid = uid('once');
  try {
    const res = await rundiffRun(['--session', sid, '--', 'sh', '-c', 'echo b > a.txt; echo cmd-once'], ws.dir);
    expect(res.code).toBe(0);
    await openSession(page, base, sid);
    const block = page.getByTestId('change-block');
    await expect(block).toHaveCount(1);
    const runId = (await block.getAttribute('data-change-id'))!.replace(/^run:/, '');
    // The command line, as the user typed it, right above the run.
    await expect(page.locator('[data-testid="message"][data-role="user"]')).toContainText('echo cmd-once');
    expect(await occurrences(page, 'cmd-once')).toBe(1);
    // The block names its run by the id its marker shows; the command stays in the tooltip.
    await expect(block.getByTestId('change-owner')).toHaveText(`Run ${runId.slice(0, 8)}`);
    await expect(block.getByTestId('change-owner')).toHaveAttribute('title', /echo cmd-once/);
    await expect(page.getByTestId('run-marker').getByTestId('run-id')).toHaveText(runId.slice(0, 8));
  } finally {
    ws.cleanup();
  }
});

test("a link to a tool call's file shows that call's own block with the file open, though its run lists the files", async ({
  page,
}) => {
  const ws = workspace({ 'a.txt': 'a\n' });
  const sid = uid('once');
  const [run, tc] = [uid('r'), uid('t')];
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Once', workspace: ws.dir });
    await bridge(base, { type: 'run.started', session_id: sid, run_id: run, source: 'coding-agent' });
    await bridge(base, { type: 'tool.started', session_id: sid, run_id: run, tool_call_id: tc, name: 'Edit' });
    ws.write('a.txt', 'a2\n');
    await bridge(base, { type: 'tool.completed', session_id: sid, run_id: run, tool_call_id: tc });
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
    const detail = (await (await fetch(`${base}/api/hermes/sessions/${sid}`)).json()) as {
      changes: { change_id: string; files: { id: string; path: string }[] }[];
    };
    const tool = detail.changes.find((c) => c.change_id === `tool:${tc}`)!;
    const card = page.locator(`[data-testid="tool-card"][data-tool-call-id="${tc}"]`);
    // Control: without the link the card only names the file.
    await openSession(page, base, sid);
    await expect(card.getByTestId('tool-files')).toBeVisible();
    await expect(card.getByTestId('change-block')).toHaveCount(0);
    await page.goto(`${base}/sessions/${sid}?change=tool:${tc}&file=${tool.files[0]!.id}`);
    await expect(card.getByTestId('change-block')).toBeVisible();
    await expect(row(page, `tool:${tc}`, 'a.txt').getByTestId('patch')).toContainText('a2');
    // Hiding the call's patches closes them and goes back to the names.
    await card.getByTestId('tool-own-patches-hide').click();
    await expect(card.getByTestId('tool-files')).toBeVisible();
  } finally {
    ws.cleanup();
  }
});

test.describe('accessibility', () => {
  test.use({ bypassCSP: true });
  for (const scheme of ['light', 'dark'] as const) {
    test(`accessibility: a \`rundiff run\` run and its block have no axe violations (${scheme})`, async ({ page }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const ws = workspace({ 'a.txt': 'a\n' });
      const sid = uid('once');
      try {
        expect((await rundiffRun(['--session', sid, '--', 'sh', '-c', 'echo b > a.txt'], ws.dir)).code).toBe(0);
        await openSession(page, base, sid);
        await expect(page.getByTestId('change-block')).toHaveCount(1);
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });

    test(`accessibility: a tool card naming its files and the run's rows tagged with the tool have no axe violations (${scheme})`, async ({
      page,
    }) => {
      await page.emulateMedia({ colorScheme: scheme });
      const ws = workspace({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
      const sid = uid('once');
      const [run, tc] = [uid('r'), uid('t')];
      try {
        await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Once', workspace: ws.dir });
        await bridge(base, { type: 'run.started', session_id: sid, run_id: run, source: 'coding-agent' });
        await bridge(base, { type: 'tool.started', session_id: sid, run_id: run, tool_call_id: tc, name: 'Edit' });
        ws.write('a.txt', 'a2\n');
        await bridge(base, { type: 'tool.completed', session_id: sid, run_id: run, tool_call_id: tc });
        ws.write('b.txt', 'b2\n');
        await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
        await openSession(page, base, sid);
        await expect(page.getByTestId('tool-files')).toBeVisible();
        await expect(page.getByTestId('change-row-tools')).toHaveText('by Edit');
        await expectNoAxeViolations(page);
      } finally {
        ws.cleanup();
      }
    });
  }
});
