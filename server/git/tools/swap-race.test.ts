import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import type { GitDiffOutput } from '../../../shared/index.ts';
import { createTempDir, createTempRepo, type TempRepo } from '../../test-support/index.ts';
import { toolHarness } from '../../test-support/tool-harness.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

const SECRET = 'TOP-SECRET-OUTSIDE-THE-REPOSITORY';

/** A repository and, next to it, a folder outside it holding a secret. */
function setup(): { repo: TempRepo; secret: string; stage: string } {
  const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
  const outside = createTempDir();
  const stage = createTempDir();
  cleanups.push(() => {
    repo.cleanup();
    fs.rmSync(outside, { recursive: true, force: true });
    fs.rmSync(stage, { recursive: true, force: true });
  });
  const secret = path.join(outside, 'secret.txt');
  fs.writeFileSync(secret, `${SECRET}\n`);
  return { repo, secret, stage };
}

/**
 * Starts a process that keeps replacing `target` (by an atomic rename) with, in turn, a regular
 * file, a symlink to `secret` and a FIFO, prepared once in `stage` and hard-linked for each swap.
 * `holdMs` > 0 keeps each kind in place up to that long (random). Bounded: it stops after `rounds`
 * swaps or 60 s. Resolves once the first swap is done.
 */
async function startSwapper(
  stage: string,
  target: string,
  secret: string,
  holdMs = 0,
  rounds = 200_000,
): Promise<ChildProcess> {
  fs.writeFileSync(path.join(stage, 'regular'), 'regular content\n');
  fs.symlinkSync(secret, path.join(stage, 'link'));
  execFileSync('mkfifo', [path.join(stage, 'fifo')]);
  const script = `
    const fs = require('node:fs');
    const [stage, target, rounds, holdMs] = process.argv.slice(1);
    const cell = new Int32Array(new SharedArrayBuffer(4));
    const kinds = ['regular', 'link', 'fifo'];
    const tmp = stage + '/tmp';
    const end = Date.now() + 60000;
    for (let i = 0; i < Number(rounds) && Date.now() < end; i++) {
      fs.rmSync(tmp, { force: true });
      fs.linkSync(stage + '/' + kinds[i % 3], tmp);
      fs.renameSync(tmp, target);
      if (i === 2) process.stdout.write('ready\\n');
      if (Number(holdMs) > 0) Atomics.wait(cell, 0, 0, Math.random() * Number(holdMs));
    }
  `;
  const child = spawn(process.execPath, ['-e', script, stage, target, String(rounds), String(holdMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (l) => l === 'ready' && resolve());
    child.on('exit', (code) => reject(new Error(`swapper exited early (${code})`)));
  });
  return child;
}

describe('git_diff reads work-tree files only through the safe read', () => {
  it('an untracked symlink to a file outside is shown as a link, never as the outside content', async () => {
    const { repo, secret } = setup();
    fs.symlinkSync(secret, path.join(repo.dir, 'new.txt'));
    const out = await toolHarness(repo).call<GitDiffOutput>('git_diff');
    expect(out.diff).toContain('new file mode 120000');
    expect(out.diff).not.toContain(SECRET);
  });

  it(
    'race: a file swapped between regular, symlink-to-secret and FIFO never leaks the secret, and every call answers',
    { tags: ['stress'], timeout: 60_000 },
    async () => {
      const { repo, secret, stage } = setup();
      const swapper = await startSwapper(stage, path.join(repo.dir, 'new.txt'), secret);
      const h = toolHarness(repo);
      const seen = { link: 0, regular: 0, unreadable: 0, calls: 0 };
      const deadline = Date.now() + 20_000;
      for (let i = 0; i < 100 && Date.now() < deadline; i++) {
        const out = await h.call<GitDiffOutput>('git_diff');
        seen.calls++;
        expect(JSON.stringify(out)).not.toContain(SECRET);
        if (out.diff.includes('new file mode 120000')) seen.link++;
        if (out.diff.includes('+regular content')) seen.regular++;
        if (out.omitted.some((o) => o.reason === 'unreadable')) seen.unreadable++;
      }
      swapper.kill('SIGKILL');
      // Positive control: the swap really happened under the tool (it saw the link and the file).
      expect(seen.link).toBeGreaterThan(0);
      expect(seen.regular).toBeGreaterThan(0);
      expect(seen.calls).toBeGreaterThanOrEqual(20);
    },
  );

  it(
    'race: a tracked file swapped the same way never leaks the secret, and every call answers',
    { tags: ['stress'], timeout: 60_000 },
    async () => {
      const { repo, secret, stage } = setup();
      repo.write('t.txt', 'tracked\n');
      repo.commit('track t.txt');
      // Each kind held up to 4 ms: long enough for git to see a whole link or file now and then.
      const swapper = await startSwapper(stage, path.join(repo.dir, 't.txt'), secret, 4);
      const h = toolHarness(repo);
      const seen = { shown: 0, unreadable: 0, calls: 0 };
      const deadline = Date.now() + 20_000;
      for (let i = 0; i < 100 && Date.now() < deadline; i++) {
        // h.call fails the test on any error: every call must answer with a diff.
        const out = await h.call<GitDiffOutput>('git_diff', i % 2 === 0 ? {} : { spec: 'HEAD' });
        seen.calls++;
        expect(JSON.stringify(out)).not.toContain(SECRET);
        if (/new file mode 120000|\+regular content/.test(out.diff)) seen.shown++;
        if (out.omitted.some((o) => o.path === 't.txt' && o.reason === 'unreadable')) seen.unreadable++;
      }
      swapper.kill('SIGKILL');
      // Positive control: the tool met the swapped-in file or link, and the FIFO (or a kind change
      // under git), in place of the tracked file.
      expect(seen.shown).toBeGreaterThan(0);
      expect(seen.unreadable).toBeGreaterThan(0);
      expect(seen.calls).toBeGreaterThanOrEqual(20);
    },
  );
});
