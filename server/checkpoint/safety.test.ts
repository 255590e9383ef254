import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, onTestFinished, test } from 'vitest';
import { ALL_PLANTS_RAN, plantControls } from '../test-support/planted.ts';
import { createTempDir, createTempRepo } from '../test-support/temp-repo.ts';
import { rows, runChange, testEngine } from '../test-support/engine-harness.ts';

const engine = testEngine();
afterAll(() => engine.close());

/** Every file under a folder with its bytes' digest (and mode). */
function digestTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const abs = path.join(d, e.name);
      if (e.isDirectory()) walk(abs);
      else
        out[path.relative(dir, abs)] =
          crypto.createHash('sha1').update(fs.readFileSync(abs)).digest('hex') +
          ':' +
          fs.statSync(abs).mode.toString(8);
    }
  };
  walk(dir);
  return out;
}

test('B26: a tracked run never executes planted fsmonitor, filters, textconv, external diff, pager or hooks, and never writes .git', async () => {
  const repo = createTempRepo({ files: { 'a.txt': 'one\ntwo\n', 'gone.txt': 'bye\n', 'bin.dat': 'x\n' } });
  onTestFinished(() => repo.cleanup());
  const markerDir = createTempDir('rundiff-marker-');
  onTestFinished(() => fs.rmSync(markerDir, { recursive: true, force: true }));
  const marker = path.join(markerDir, 'ran');
  const script = path.join(markerDir, 'evil.sh');
  fs.writeFileSync(script, `#!/bin/sh\necho "$0 $*" >> '${marker}'\ncat\n`, { mode: 0o755 });
  const hooks = path.join(markerDir, 'hooks');
  fs.mkdirSync(hooks);
  for (const h of ['pre-commit', 'post-checkout', 'post-index-change', 'reference-transaction', 'fsmonitor-watchman']) {
    fs.writeFileSync(path.join(hooks, h), `#!/bin/sh\necho hook >> '${marker}'\n`, { mode: 0o755 });
  }
  for (const [k, v] of [
    ['core.fsmonitor', script],
    ['filter.x.clean', script],
    ['filter.x.smudge', script],
    ['filter.x.process', script],
    ['filter.x.required', 'true'],
    ['diff.x.textconv', script],
    ['diff.x.command', script],
    ['diff.external', script],
    ['core.pager', script],
    ['core.hooksPath', hooks],
  ])
    repo.git('config', k!, v!);
  fs.writeFileSync(path.join(repo.dir, '.git/info/attributes'), '* filter=x diff=x\n');
  repo.write('.gitattributes', '* filter=x diff=x\n');
  fs.rmSync(marker, { force: true });
  const before = digestTree(path.join(repo.dir, '.git'));

  const { delta } = await runChange(engine, repo.dir, () => {
    repo.write('a.txt', 'one\nTWO\n');
    repo.rm('gone.txt');
    repo.write('new.txt', 'new\n');
    repo.write('bin.dat', 'y\n');
  });
  expect(rows(delta)).toEqual(['M a.txt +1 -1', 'M bin.dat +1 -1', 'D gone.txt +0 -1', 'A new.txt +1 -0']);
  expect(fs.existsSync(marker)).toBe(false);
  expect(digestTree(path.join(repo.dir, '.git'))).toEqual(before);
  // Positive control: plain git runs each planted mechanism.
  expect(plantControls(repo, 'x', marker)).toEqual(ALL_PLANTS_RAN);
});
