import { expect, test } from './support.ts';
import {
  blockRows,
  bridge,
  lines,
  openSession,
  recordPatchRequests,
  row,
  servers,
  timelineKeys,
  uid,
  workspace,
} from './support.ts';

const base = servers.main;

/** A session with two runs: run 1 has a tool call and a final assistant message, run 2 none. */
async function twoRunSession() {
  const ws = workspace({ 'src/Login.vue': lines(10), 'old/login.js': lines(22), 'old.ts': lines(10, 'const x =') });
  const sid = uid('s');
  const [r1, r2, tc1] = [uid('r1'), uid('r2'), uid('tc1')];
  const m = (id: string) => `${sid}-${id}`;
  await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Login rework', workspace: ws.dir });
  await bridge(base, {
    type: 'message',
    session_id: sid,
    role: 'user',
    content: 'Fix the login',
    message_id: m('u1'),
    run_id: r1,
  });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: r1 });
  await bridge(base, {
    type: 'message',
    session_id: sid,
    role: 'assistant',
    content: 'I will add an auth module.',
    message_id: m('a1'),
    run_id: r1,
  });
  await bridge(base, { type: 'tool.started', session_id: sid, run_id: r1, tool_call_id: tc1, name: 'write_file' });
  ws.write('src/api/auth.ts', lines(3, 'export const a'));
  await bridge(base, { type: 'tool.completed', session_id: sid, run_id: r1, tool_call_id: tc1 });
  await bridge(base, {
    type: 'message',
    session_id: sid,
    role: 'tool',
    content: 'wrote src/api/auth.ts',
    message_id: m('t1'),
    run_id: r1,
    tool_call_id: tc1,
  });
  ws.write(
    'src/Login.vue',
    'line 1\nline 2\nline 3\nline 4\nnew a\nnew b\nline 6\nline 7\nline 8\nline 9\nline 10\nextra\n',
  );
  ws.rm('old/login.js');
  await bridge(base, {
    type: 'message',
    session_id: sid,
    role: 'assistant',
    content: 'Done: **login** fixed.',
    message_id: m('a2'),
    run_id: r1,
  });
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: r1 });
  await bridge(base, {
    type: 'message',
    session_id: sid,
    role: 'user',
    content: 'Rename old.ts',
    message_id: m('u2'),
    run_id: r2,
  });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: r2 });
  ws.rm('old.ts');
  ws.write('new.ts', lines(9, 'const x =') + 'const y = 10\n');
  await bridge(base, { type: 'run.completed', session_id: sid, run_id: r2 });
  return { ws, sid, r1, r2, tc1, m };
}

test('B24: run and tool change blocks render under the right messages and tool cards', async ({ page }) => {
  const { ws, sid, r1, r2, tc1, m } = await twoRunSession();
  try {
    await openSession(page, base, sid);
    expect(await timelineKeys(page)).toEqual([
      `message:${m('u1')}`,
      `run:${r1}`,
      `message:${m('a1')}`,
      `tool:${tc1}`,
      `message:${m('a2')}`,
      `outcome:${r1}`,
      `message:${m('u2')}`,
      `run:${r2}`,
      `outcome:${r2}`,
    ]);
    const runBlock = page.locator(`[data-testid="change-block"][data-change-id="run:${r1}"]`);
    await expect(runBlock.getByTestId('change-heading')).toHaveText('Changed 3 files');
    expect(await blockRows(page, `run:${r1}`)).toEqual([
      'D old/login.js +0 -22',
      'M src/Login.vue +3 -1',
      'A src/api/auth.ts +3 -0',
    ]);

    // The tool's own block sits inside its card; the tool message is in the card's collapsible body.
    const card = page.locator(`[data-testid="tool-card"][data-tool-call-id="${tc1}"]`);
    // Each file is listed once per run: in the run's block, with the tool that changed it; the
    // tool's card names the files it made and links to them, its own patches shown on request.
    await expect(card.getByTestId('change-block')).toHaveCount(0);
    await expect(card.getByTestId('tool-files')).toHaveText(/^Made 1 of this run's files:\s*src\/api\/auth\.ts/);
    await expect(row(page, `run:${r1}`, 'src/api/auth.ts').getByTestId('change-row-tools')).toHaveText('by write_file');
    await expect(row(page, `run:${r1}`, 'src/Login.vue').getByTestId('change-row-tools')).toHaveCount(0);
    await expect(page.getByTestId('change-row').filter({ hasText: 'src/api/auth.ts' })).toHaveCount(1);
    await card.getByTestId('tool-file').click();
    const opened = row(page, `run:${r1}`, 'src/api/auth.ts');
    await expect(opened.getByTestId('change-row-button')).toHaveAttribute('aria-expanded', 'true');
    await expect(opened.getByTestId('change-row-button')).toBeFocused();
    await card.getByTestId('tool-own-patches').click();
    await expect(card.getByTestId('change-block')).toHaveAttribute('data-change-id', `tool:${tc1}`);
    await expect(card.getByTestId('change-heading')).toHaveText('Changed 1 file');
    expect(await blockRows(page, `tool:${tc1}`)).toEqual(['A src/api/auth.ts +3 -0']);
    await card.getByTestId('tool-own-patches-hide').click();
    await expect(card.getByTestId('change-block')).toHaveCount(0);
    await expect(card.getByTestId('tool-body')).toHaveCount(0);
    await card.getByTestId('tool-toggle').click();
    await expect(card.getByTestId('tool-output')).toHaveText('wrote src/api/auth.ts');

    // Run 2 has no assistant message: its block follows its last message (the marker, here).
    expect(await blockRows(page, `run:${r2}`)).toEqual(['R old.ts -> new.ts +1 -1']);
    await expect(page.locator(`[data-testid="run-marker"][data-run-id="${r1}"]`)).toHaveAttribute(
      'data-status',
      'completed',
    );
    // Assistant Markdown is rendered.
    await expect(page.locator(`[data-message-id="${m('a2')}"] strong`)).toHaveText('login');
  } finally {
    ws.cleanup();
  }
});

test('B24: loading a session fetches no patch; a click fetches exactly one; a second click none', async ({ page }) => {
  const { ws, sid, r1 } = await twoRunSession();
  try {
    const patchRequests = recordPatchRequests(page);
    await openSession(page, base, sid);
    await expect(page.getByTestId('change-block').first()).toBeVisible();
    await page.waitForLoadState('networkidle');
    expect(patchRequests).toHaveLength(0);

    const login = row(page, `run:${r1}`, 'src/Login.vue');
    await login.getByRole('button').first().click();
    const patch = login.getByTestId('patch');
    await expect(patch).toBeVisible();
    expect(patchRequests).toHaveLength(1);
    expect(new URL(patchRequests[0]!.url()).pathname).toContain(
      `/workspace-run-changes/${encodeURIComponent(`run:${r1}`)}/files/`,
    );

    // Line numbers, +/- colours and hunk headers.
    await expect(patch.locator('tr.pl-hunk').first()).toContainText('@@ -');
    const del = patch.locator('tr.pl-del', { hasText: '-line 5' });
    await expect(del.locator('td.ln-old')).toHaveText('5');
    await expect(del.locator('td.ln-new')).toHaveText('');
    const add = patch.locator('tr.pl-add', { hasText: '+new a' });
    await expect(add.locator('td.ln-new')).toHaveText('5');
    await expect(add.locator('td.code')).toHaveCSS('background-color', 'rgb(230, 255, 236)');
    await expect(del.locator('td.code')).toHaveCSS('background-color', 'rgb(255, 235, 233)');
    await expect(patch.locator('tr.pl-context', { hasText: 'line 4' }).locator('td.ln-new')).toHaveText('4');

    // Collapse and expand again: served from the cache.
    await login.getByRole('button').first().click();
    await expect(patch).toHaveCount(0);
    await login.getByRole('button').first().click();
    await expect(login.getByTestId('patch')).toBeVisible();
    await page.waitForLoadState('networkidle');
    expect(patchRequests).toHaveLength(1);
  } finally {
    ws.cleanup();
  }
});

test('B25: a run completed through the bridge while the page is open appears live', async ({ page }) => {
  const ws = workspace({ 'README.md': lines(3) });
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Live run', workspace: ws.dir });
    await openSession(page, base, sid);
    await expect(page.getByTestId('timeline-empty')).toBeVisible();
    await page.evaluate(() => {
      (globalThis as Record<string, unknown>).__sameDocument = true;
    });

    await bridge(base, {
      type: 'message',
      session_id: sid,
      role: 'user',
      content: 'Update the readme',
      message_id: `${sid}-u`,
      run_id: run,
    });
    await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
    const marker = page.locator(`[data-testid="run-marker"][data-run-id="${run}"]`);
    await expect(marker).toHaveAttribute('data-status', 'running');

    // A tool call: its card and its own block appear live too.
    const tc = uid('tc');
    await bridge(base, { type: 'tool.started', session_id: sid, run_id: run, tool_call_id: tc, name: 'edit_file' });
    const card = page.locator(`[data-testid="tool-card"][data-tool-call-id="${tc}"]`);
    await expect(card).toHaveAttribute('data-status', 'running');
    ws.write('README.md', lines(4));
    await bridge(base, { type: 'tool.completed', session_id: sid, run_id: run, tool_call_id: tc });
    await expect(card).toHaveAttribute('data-status', 'completed');
    await expect(card.getByTestId('change-block')).toHaveAttribute('data-change-id', `tool:${tc}`);
    expect(await blockRows(page, `tool:${tc}`)).toEqual(['M README.md +1 -0']);
    await bridge(base, {
      type: 'message',
      session_id: sid,
      role: 'assistant',
      content: 'Updated.',
      message_id: `${sid}-a`,
      run_id: run,
    });
    await bridge(base, {
      type: 'message',
      session_id: sid,
      role: 'assistant',
      content: 'Updated the readme.',
      message_id: `${sid}-a`,
      run_id: run,
    });
    await expect(page.locator(`[data-message-id="${sid}-a"]`)).toContainText('Updated the readme.');
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });

    await expect(marker).toHaveAttribute('data-status', 'completed');
    await expect(page.locator(`[data-change-id="run:${run}"] [data-testid="change-heading"]`)).toHaveText(
      'Changed 1 file',
    );
    expect(await blockRows(page, `run:${run}`)).toEqual(['M README.md +1 -0']);
    // With the run's block there, the tool's card stops repeating its rows and names the file.
    await expect(card.getByTestId('change-block')).toHaveCount(0);
    await expect(card.getByTestId('tool-file')).toHaveText('README.md');
    expect(await timelineKeys(page)).toEqual([
      `message:${sid}-u`,
      `run:${run}`,
      `tool:${tc}`,
      `message:${sid}-a`,
      `outcome:${run}`,
    ]);
    expect(await page.evaluate(() => (globalThis as Record<string, unknown>).__sameDocument)).toBe(true);
  } finally {
    ws.cleanup();
  }
});

test('B25: an open run shows "Working... N files touched" from the live feed', async ({ page }) => {
  const ws = workspace({ 'a.txt': 'a\n' });
  const sid = uid('s');
  const run = uid('r');
  try {
    await bridge(base, { type: 'session.upsert', session_id: sid, title: 'Progress', workspace: ws.dir });
    await openSession(page, base, sid);
    await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
    await expect(page.locator(`[data-testid="run-marker"][data-run-id="${run}"]`)).toHaveAttribute(
      'data-status',
      'running',
    );
    // The feed watches from shortly after run.started: keep editing until it reports (the delta,
    // unlike the feed, counts every edit from the checkpoint on).
    let written = 0;
    await expect(async () => {
      ws.write(`f${written++}.txt`, 'x\n');
      await expect(page.getByTestId('run-progress').getByTestId('progress-heading')).toHaveText(
        /^Working\.\.\. \d+ files? touched$/,
        { timeout: 1_000 },
      );
    }).toPass({ timeout: 15_000 });
    const heading = page.getByTestId('run-progress').getByTestId('progress-heading');
    const touched = Number(/(\d+)/.exec(await heading.innerText())![1]);
    expect(touched).toBeGreaterThanOrEqual(1);
    expect(touched).toBeLessThanOrEqual(written);
    await bridge(base, { type: 'run.completed', session_id: sid, run_id: run });
    await expect(page.getByTestId('run-progress')).toHaveCount(0);
    await expect(page.locator(`[data-change-id="run:${run}"] [data-testid="change-heading"]`)).toHaveText(
      `Changed ${written} ${written === 1 ? 'file' : 'files'}`,
    );
  } finally {
    ws.cleanup();
  }
});

test('an untracked run says why in words; a failed run shows its error', async ({ page }) => {
  const sid = uid('s');
  const run = uid('r');
  await bridge(base, {
    type: 'session.upsert',
    session_id: sid,
    title: 'Missing workspace',
    workspace: `/nonexistent/${sid}`,
  });
  await bridge(base, {
    type: 'message',
    session_id: sid,
    role: 'user',
    content: 'go',
    message_id: `${sid}-u`,
    run_id: run,
  });
  await bridge(base, { type: 'run.started', session_id: sid, run_id: run });
  await bridge(base, { type: 'run.failed', session_id: sid, run_id: run, error: 'agent exited with code 2' });
  await openSession(page, base, sid);
  await expect(page.getByTestId('run-untracked')).toHaveText(
    'Changes not tracked: the workspace folder does not exist.',
  );
  const marker = page.locator(`[data-testid="run-marker"][data-run-id="${run}"]`);
  await expect(marker).toHaveAttribute('data-status', 'failed');
  await expect(marker.getByTestId('run-error')).toHaveText('agent exited with code 2');
});

test('B6: a run that overlapped another on the same workspace carries a warning', async ({ page }) => {
  const ws = workspace({ 'shared.txt': 'a\n' });
  const [s1, s2] = [uid('s'), uid('s')];
  const [r1, r2] = [uid('r'), uid('r')];
  try {
    await bridge(base, { type: 'session.upsert', session_id: s1, title: 'First', workspace: ws.dir });
    await bridge(base, { type: 'session.upsert', session_id: s2, title: 'Second', workspace: ws.dir });
    await bridge(base, { type: 'run.started', session_id: s1, run_id: r1 });
    await bridge(base, { type: 'run.started', session_id: s2, run_id: r2 });
    ws.write('shared.txt', 'b\n');
    await bridge(base, { type: 'run.completed', session_id: s2, run_id: r2 });
    await bridge(base, { type: 'run.completed', session_id: s1, run_id: r1 });
    await openSession(page, base, s1);
    const block = page.locator(`[data-testid="change-block"][data-change-id="run:${r1}"]`);
    await expect(block.getByTestId('change-overlapping')).toContainText('Another run changed this workspace');
  } finally {
    ws.cleanup();
  }
});
