import { spawn } from 'node:child_process';
import path from 'node:path';
import { expectNoAxeViolations } from './axe.ts';
import { expect, openSession, servers, test, uid, workspace } from './support.ts';

const base = servers.main;

/** `rundiff run` against the e2e server, as a user runs it. */
function rundiffRun(args: string[], cwd: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.resolve('bin/rundiff.js'), 'run', '--server', base, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

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
  }
});
