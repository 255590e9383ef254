import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expectNoAxeViolations } from './axe.ts';
import { bridge, expect, openSession, ownServer, test, uid, workspace } from './support.ts';

/**
 * Codex skips hooks nobody trusted and says nothing: a person with rundiff's hooks installed for
 * Codex and never trusted sees why nothing is recorded, in the sessions list and in a Codex session,
 * until Codex's config trusts them. A server of the spec's own, whose home holds the hooks.
 */
test('an untrusted Codex install is said in the sessions list and a Codex session, and no longer once trusted', async ({
  page,
}) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-e2e-notices-'));
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  // The real installer, as a person runs it.
  const install = spawnSync(process.execPath, ['bin/rundiff.js', 'hooks', 'install', 'codex', '--no-autostart'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
    encoding: 'utf8',
  });
  expect(install.status, install.stderr).toBe(0);
  const hooksFile = path.join(home, '.codex', 'hooks.json');
  const server = await ownServer(path.join(dir, 'own.db'), { HOME: home });
  const ws = workspace({ 'a.txt': 'a\n' });
  try {
    await page.goto(`${server.url}/`);
    const notice = page.getByTestId('agent-setup-notice');
    await expect(notice).toHaveCount(1);
    await expect(notice).toHaveAttribute('data-code', 'hooks_untrusted');
    await expect(notice).toContainText("Codex has not trusted rundiff's hooks (0 of 4 trusted)");
    await expect(notice.locator('code').first()).toHaveText('codex');
    await expect(notice).toContainText(hooksFile);
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expectNoAxeViolations(page, '[data-testid="agent-setup-notice"]');
    }

    // A session Codex's hooks reported (one prompt that got through before): the notice is there too.
    const codexId = uid('codex');
    const post = async (body: Record<string, unknown>) => {
      const res = await fetch(`${server.url}/api/hooks/codex`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session_id: codexId, cwd: ws.dir, model: 'gpt-5', turn_id: 't1', ...body }),
      });
      expect(res.status).toBe(200);
    };
    await post({ hook_event_name: 'UserPromptSubmit', prompt: 'say hi' });
    await post({ hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'hi' });
    await openSession(page, server.url, `codex:${codexId}`);
    await expect(page.getByTestId('agent-setup-notice')).toHaveAttribute('data-agent', 'codex');
    // Control: a session of another source says nothing of Codex.
    const other = uid('s');
    await bridge(server.url, { type: 'run.started', session_id: other, run_id: uid('r'), workspace: ws.dir });
    await openSession(page, server.url, other);
    await expect(page.getByTestId('session-title')).toBeVisible();
    await expect(page.getByTestId('agent-setup-notice')).toHaveCount(0);
    // (The page has no notices component for such a session at all, so nothing can come late.)
    await expect(page.getByTestId('agent-setup-notices')).toHaveCount(0);

    // The person trusts the hooks in Codex (as Codex writes it): the list says nothing any more.
    const keys = ['user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop'].map((e) => `${hooksFile}:${e}:0:0`);
    fs.writeFileSync(
      path.join(home, '.codex', 'config.toml'),
      keys.map((k) => `[hooks.state.${JSON.stringify(k)}]\ntrusted_hash = "sha256:ab"\n`).join('\n'),
    );
    await page.goto(`${server.url}/`);
    await expect(page.getByTestId('agent-setup-notices')).toHaveAttribute('data-loaded', 'true');
    await expect(page.getByTestId('agent-setup-notice')).toHaveCount(0);
  } finally {
    await server.stop();
    ws.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
