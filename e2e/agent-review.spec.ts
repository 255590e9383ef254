import fs from 'node:fs';
import path from 'node:path';
import type { SessionListResponse } from '../shared/index.ts';
import {
  claudeCodeSupported,
  ensureClaudeCode,
  installClaudeCodeHooks,
  runClaudeCode,
} from '../server/test-support/claude-code.ts';
import { startScriptedAnthropic } from '../server/test-support/scripted-anthropic.ts';
import { createTempDir } from '../server/test-support/temp-repo.ts';
import { expect, openSession, row, servers, test, workspace } from './support.ts';

/**
 * The whole loop in the browser, with the real Claude Code CLI (offline, against a scripted model)
 * reporting through the hooks `rundiff hooks install` wrote: its first prompt edits a file, a person
 * comments on a line of that run's patch in the timeline and sends the review, the agent's next
 * prompt carries it to the model, and the timeline shows it delivered, live.
 */

const base = servers.main;
/** Words found nowhere but in the comment: finding them in a model request proves the review got there. */
const COMMENT = 'Call it orbit-5521 instead, please.';

test.skip(!claudeCodeSupported, 'the Claude Code binary exists for linux x64 only');

test('a comment written in the timeline reaches the real Claude Code at its next prompt and shows as delivered', async ({
  page,
}) => {
  test.setTimeout(360_000);
  const bin = await ensureClaudeCode();
  const repo = workspace({ 'src/planet.txt': 'mercury\nvenus\n' });
  const home = createTempDir('rundiff-e2e-agent-home-');
  const model = await startScriptedAnthropic([
    {
      match: 'first prompt',
      turns: [
        // The CLI edits only a file it has read.
        { tool: 'Read', input: { file_path: path.join(repo.dir, 'src/planet.txt') } },
        {
          tool: 'Edit',
          input: { file_path: path.join(repo.dir, 'src/planet.txt'), old_string: 'venus', new_string: 'earth' },
        },
        { text: 'Renamed the planet.' },
      ],
    },
    { match: 'second prompt', turns: [{ text: 'Noted.' }] },
  ]);
  try {
    const install = await installClaudeCodeHooks(repo.dir, base, home);
    expect(install.code, install.stderr).toBe(0);
    const opts = { bin, cwd: repo.dir, home, modelUrl: model.url };
    const first = await runClaudeCode('Please handle the first prompt.', opts);
    expect(first.code, first.stderr).toBe(0);

    const list = (await (
      await fetch(`${base}/api/hermes/sessions?workspace=${encodeURIComponent(repo.dir)}`)
    ).json()) as SessionListResponse;
    expect(list.sessions).toHaveLength(1);
    const sessionId = list.sessions[0]!.id;

    // The run's change block, its file, a comment on the edited line through the gutter.
    await openSession(page, base, sessionId);
    const changeId = await page
      .locator('[data-testid="change-block"]')
      .filter({ has: page.locator('[data-path="src/planet.txt"]') })
      .last()
      .getAttribute('data-change-id');
    expect(changeId, 'a change block holds src/planet.txt').toBeTruthy();
    const planet = row(page, changeId!, 'src/planet.txt');
    await planet.getByTestId('change-row-button').click();
    await expect(planet.getByTestId('patch')).toHaveAttribute('data-rendered', 'true');
    const gutter = planet.locator('button.cgut[data-side="after"][data-line="2"]');
    await planet.locator('tr', { hasText: 'earth' }).first().hover();
    await gutter.click();
    await planet.getByTestId('comment-text').fill(COMMENT);
    await planet.getByTestId('comment-submit').click();
    const card = planet.getByTestId('comment-card').filter({ hasText: COMMENT });
    await expect(card).toHaveAttribute('data-state', 'draft');

    await page.getByTestId('review-toggle').click();
    await page.getByTestId('review-send').click();
    await expect(card).toHaveAttribute('data-state', 'pending');

    const before = model.requests.length;
    const second = await runClaudeCode('Now the second prompt.', { ...opts, args: ['--continue'] });
    expect(second.code, second.stderr).toBe(0);
    const carries = (r: { body: unknown }) => JSON.stringify(r.body).includes('orbit-5521');
    // Positive control: no request of the first prompt held the comment.
    expect(model.requests.slice(0, before).some(carries)).toBe(false);
    const main = model.requests.slice(before).filter((r) => r.main);
    expect(main.length).toBeGreaterThan(0);
    expect(carries(main[0]!)).toBe(true);

    // The page learns it live: the card and the panel's sent review say delivered, by the hook.
    await expect(card).toHaveAttribute('data-state', 'delivered');
    await expect(card).toContainText('claude-code');
    await expect(page.getByTestId('review-sent-state').first()).toContainText('claude-code');
  } finally {
    await model.close();
    repo.cleanup();
    fs.rmSync(home, { recursive: true, force: true });
  }
});
