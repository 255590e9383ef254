import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import type { GitDiffOutput } from '../../../shared/index.ts';
import { createTempDir, createTempRepo, type TempRepo } from '../../test-support/index.ts';
import { callTool } from './call-tool.ts';
import { toolHarness, withIdentity } from '../../test-support/tool-harness.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function fresh(): TempRepo {
  const repo = withIdentity(createTempRepo({ files: { 'a.txt': 'one\n', 'b.txt': 'bee\n' } }));
  cleanups.push(() => repo.cleanup());
  return repo;
}

/** The new-side blob id a diff showed for `name` (from its `index <old>..<new>` line). */
function shownOid(diff: string, name: string): string | null {
  const at = diff.indexOf(`diff --git a/${name} b/${name}\n`);
  if (at === -1) return null;
  const m = /\nindex [0-9a-f]+\.\.([0-9a-f]+)/.exec(diff.slice(at));
  return m ? m[1]! : null;
}

/**
 * A process that keeps rewriting `target` (atomic rename) with fresh content, pausing between
 * writes so that some reviews and commits fall between two writes and some do not.
 * Bounded: `rounds` writes or 60 s. Resolves after its first write.
 */
async function startWriter(target: string, rounds = 2000): Promise<ChildProcess> {
  const stage = createTempDir();
  cleanups.push(() => fs.rmSync(stage, { recursive: true, force: true }));
  const script = `
    const fs = require('node:fs');
    const [target, stage, rounds] = process.argv.slice(1);
    const end = Date.now() + 60000;
    let i = 0;
    const step = () => {
      if (i >= Number(rounds) || Date.now() > end) return;
      fs.writeFileSync(stage + '/tmp', 'unreviewed write ' + i + '\\n');
      fs.renameSync(stage + '/tmp', target);
      if (i === 0) process.stdout.write('ready\\n');
      i++;
      // Mostly short pauses (writes land inside a review-to-commit window), some long ones
      // (whole review-and-commit rounds fit between two writes).
      setTimeout(step, Math.floor(Math.random() * (Math.random() < 0.5 ? 60 : 600)));
    };
    step();
  `;
  const child = spawn(process.execPath, ['-e', script, target, stage, String(rounds)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (l) => l === 'ready' && resolve());
    child.on('exit', (code) => reject(new Error(`writer exited early (${code})`)));
  });
  return child;
}

describe('git_commit commits exactly what the review showed', () => {
  it('a chmod +x after the review is stale_review; the commit never carries a mode no diff showed', async () => {
    const repo = fresh();
    repo.write('a.txt', 'two\n');
    repo.write('new.sh', 'echo hi\n');
    const h = toolHarness(repo);
    const diff = await h.call<GitDiffOutput>('git_diff');
    expect(diff.diff).toContain('new file mode 100644');
    fs.chmodSync(path.join(repo.dir, 'a.txt'), 0o755);
    fs.chmodSync(path.join(repo.dir, 'new.sh'), 0o755);
    const before = repo.git('rev-parse', 'HEAD').trim();
    for (const p of ['a.txt', 'new.sh']) {
      const err = await h.fail('git_commit', { message: 'm', paths: [p] });
      expect(err.code, p).toBe('stale_review');
    }
    expect(repo.git('rev-parse', 'HEAD').trim()).toBe(before);
    // Reviewing the mode change lets the same commit through, with the mode shown.
    const again = await h.call<GitDiffOutput>('git_diff');
    expect(again.diff).toContain('new mode 100755');
    await h.call('git_commit', { message: 'm', paths: ['a.txt', 'new.sh'] });
    expect(repo.git('ls-tree', 'HEAD', 'a.txt', 'new.sh')).toMatch(/^100755 blob .*a\.txt\n100755 blob .*new\.sh\n$/);
  });

  it(
    'race: under a concurrent writer, every commit holds only the blob its review showed',
    { tags: ['stress'], timeout: 90_000 },
    async () => {
      const repo = fresh();
      const writer = await startWriter(path.join(repo.dir, 'a.txt'));
      const outcome = { committed: 0, stale: 0, other: 0 };
      const deadline = Date.now() + 45_000;
      // Bounded by count and time; stops early once both outcomes were seen often enough.
      for (let i = 0; i < 120 && Date.now() < deadline; i++) {
        if (outcome.committed >= 15 && outcome.stale >= 3) break;
        const h = toolHarness(repo);
        const diff = await h.call<GitDiffOutput>('git_diff');
        const reviewed = shownOid(diff.diff, 'a.txt');
        const before = repo.git('rev-parse', 'HEAD').trim();
        const res = await callTool('git_commit', { message: `commit ${i}`, paths: ['a.txt'] }, h.ctx);
        if (res.ok) {
          outcome.committed++;
          expect(reviewed).not.toBeNull();
          expect(repo.git('rev-parse', 'HEAD:a.txt').trim()).toBe(reviewed);
          expect(repo.git('rev-parse', 'HEAD~1').trim()).toBe(before);
        } else if (res.error.code === 'stale_review') outcome.stale++;
        else {
          expect(['review_required', 'nothing_to_commit'], `${res.error.code}: ${res.error.message}`).toContain(
            res.error.code,
          );
          outcome.other++;
        }
      }
      writer.kill('SIGKILL');
      // Positive control: the writer really raced the tools (some reviews went stale), and some
      // commits went through, so the assertion above was exercised.
      expect(outcome.stale, JSON.stringify(outcome)).toBeGreaterThan(0);
      expect(outcome.committed, JSON.stringify(outcome)).toBeGreaterThan(0);
    },
  );
});

describe('core.fileMode=false', () => {
  it('the execute bit is ignored as git ignores it: reviewed, committed and shown with the index mode', async () => {
    const repo = fresh();
    repo.git('config', 'core.fileMode', 'false');
    repo.write('a.txt', 'two\n');
    repo.write('new.txt', 'n\n');
    fs.chmodSync(path.join(repo.dir, 'a.txt'), 0o755);
    fs.chmodSync(path.join(repo.dir, 'new.txt'), 0o755);
    const h = toolHarness(repo);
    const diff = await h.call<GitDiffOutput>('git_diff');
    expect(diff.diff).not.toContain('100755');
    await h.call('git_commit', { message: 'm', paths: ['a.txt', 'new.txt'] });
    expect(repo.git('ls-tree', 'HEAD', 'a.txt', 'new.txt')).toMatch(/^100644 blob .*a\.txt\n100644 blob .*new\.txt\n$/);
  });
});

describe('a staged commit from the checked copy of the index', () => {
  it('concludes a merge in progress: two parents, the merge state cleared, the index clean', async () => {
    const repo = fresh();
    repo.git('checkout', '-q', '-b', 'side');
    repo.write('b.txt', 'side\n');
    repo.commit('side');
    repo.git('checkout', '-q', 'main');
    repo.write('a.txt', 'main\n');
    repo.commit('main');
    repo.git('merge', '-q', '--no-ff', '--no-commit', 'side');
    const h = toolHarness(repo);
    await h.call('git_diff', { staged: true });
    await h.call('git_commit', { message: 'Merge side' });
    expect(repo.git('rev-list', '--parents', '-1', 'HEAD').trim().split(' ')).toHaveLength(3);
    expect(fs.existsSync(path.join(repo.dir, '.git', 'MERGE_HEAD'))).toBe(false);
    expect(repo.git('status', '--porcelain')).toBe('');
  });
});
