import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTempDir } from '../../test-support/temp-repo.ts';
import { hooksCommand } from '../hooks.ts';
import { agentSetupNotices } from './setup-notices.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function home(): { home: string; ws: string } {
  const root = createTempDir('rundiff-setup-notices-');
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const f = { home: path.join(root, 'home'), ws: path.join(root, 'project') };
  fs.mkdirSync(f.home);
  fs.mkdirSync(f.ws);
  return f;
}

/** The real `rundiff hooks install codex`, into the temporary home. */
async function installCodex(f: { home: string; ws: string }): Promise<void> {
  const code = await hooksCommand(['install', 'codex'], {
    env: { HOME: f.home },
    cwd: f.ws,
    out: () => undefined,
    hookScript: '/opt/rundiff/bin/rundiff-hook.js',
  });
  expect(code).toBe(0);
}

/** Codex's trust of one hook, as Codex 0.169.0 writes it to ~/.codex/config.toml. */
const trustTable = (key: string) => `[hooks.state.${JSON.stringify(key)}]\ntrusted_hash = "sha256:ab12"\n`;
const KEYS = ['user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'stop'];

describe("the setup notices: Codex's trust of rundiff's hooks", () => {
  it('installed and not trusted: one notice naming the hooks file and the step; trusted: none', async () => {
    const f = home();
    expect(agentSetupNotices(f.home)).toEqual([]); // nothing installed: nothing to say
    await installCodex(f);
    const hooksFile = path.join(f.home, '.codex', 'hooks.json');
    const [notice, ...more] = agentSetupNotices(f.home);
    expect(more).toEqual([]);
    expect(notice).toMatchObject({ agent: 'codex', code: 'hooks_untrusted', file: hooksFile });
    expect(notice!.message).toMatch(/0 of 4 trusted.*runs record nothing/);
    expect(notice!.fix).toMatch(/Trust all and continue/);

    const config = path.join(f.home, '.codex', 'config.toml');
    const keys = KEYS.map((e) => `${hooksFile}:${e}:0:0`);
    fs.writeFileSync(config, keys.slice(0, 3).map(trustTable).join('\n'));
    expect(agentSetupNotices(f.home)[0]?.message).toMatch(/3 of 4 trusted/);
    fs.appendFileSync(config, `\n${trustTable(keys[3]!)}`);
    expect(agentSetupNotices(f.home)).toEqual([]);
    // A hook turned off afterwards is its own notice, naming Codex's config.
    fs.appendFileSync(config, `\n[hooks.state]\n${JSON.stringify(keys[1])}.enabled = false\n`);
    expect(agentSetupNotices(f.home)).toEqual([
      expect.objectContaining({ agent: 'codex', code: 'hooks_disabled', file: config }),
    ]);
  });

  it("a hooks file with only the person's own hooks, or one that does not parse, gives no notice", async () => {
    const f = home();
    const hooksFile = path.join(f.home, '.codex', 'hooks.json');
    fs.mkdirSync(path.dirname(hooksFile));
    fs.writeFileSync(
      hooksFile,
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'say' }] }] } }),
    );
    expect(agentSetupNotices(f.home)).toEqual([]);
    fs.writeFileSync(hooksFile, '{ not json');
    expect(agentSetupNotices(f.home)).toEqual([]);
    // Control: rundiff's hooks in the same file are noticed.
    fs.rmSync(hooksFile);
    await installCodex(f);
    expect(agentSetupNotices(f.home)).toHaveLength(1);
  });
});
