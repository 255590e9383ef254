import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { TempRepo } from './temp-repo.ts';

/**
 * B26 fixture: points every setting through which a repository can make git run code at a script
 * that writes a marker file. After the code under test ran, `markerExists()` must be false and
 * `gitFingerprint()` unchanged.
 */
export function plantHostileConfig(repo: TempRepo): { marker: string; markerExists: () => boolean } {
  const marker = path.join(path.dirname(repo.dir), `${path.basename(repo.dir)}-planted-marker`);
  const script = path.join(repo.dir, '.git', 'evil.sh');
  fs.writeFileSync(script, `#!/bin/sh\necho ran "$0" "$@" >> '${marker}'\ncat\n`, { mode: 0o755 });
  const hooks = path.join(repo.dir, '.git', 'evil-hooks');
  fs.mkdirSync(hooks, { recursive: true });
  for (const hook of [
    'pre-commit',
    'post-checkout',
    'post-index-change',
    'reference-transaction',
    'fsmonitor-watchman',
  ]) {
    fs.writeFileSync(path.join(hooks, hook), `#!/bin/sh\necho hook ${hook} >> '${marker}'\n`, { mode: 0o755 });
  }
  const settings: [string, string][] = [
    ['core.fsmonitor', script],
    ['core.pager', script],
    ['core.hooksPath', hooks],
    ['core.editor', script],
    ['core.askPass', script],
    ['diff.external', script],
    ['diff.evil.textconv', script],
    ['diff.evil.command', script],
    ['filter.evil.clean', script],
    ['filter.evil.smudge', script],
    ['filter.evil.process', script],
    ['filter.evil.required', 'true'],
    ['pager.status', script],
    ['pager.diff', script],
    ['pager.log', script],
  ];
  for (const [k, v] of settings) repo.git('config', k, v);
  fs.appendFileSync(path.join(repo.dir, '.git', 'info', 'attributes'), '* filter=evil diff=evil\n');
  return { marker, markerExists: () => fs.existsSync(marker) };
}

/** A hash over `.git/index`, `.git/config`, HEAD, refs and every object file: any write shows. */
export function gitFingerprint(gitDir: string): string {
  const h = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const abs = path.join(dir, name);
      const st = fs.lstatSync(abs);
      if (st.isDirectory()) walk(abs);
      else if (st.isFile()) h.update(abs).update(fs.readFileSync(abs));
    }
  };
  for (const f of ['index', 'config', 'HEAD', 'packed-refs']) {
    const abs = path.join(gitDir, f);
    if (fs.existsSync(abs)) h.update(f).update(fs.readFileSync(abs));
  }
  for (const d of ['objects', 'refs']) if (fs.existsSync(path.join(gitDir, d))) walk(path.join(gitDir, d));
  return h.digest('hex');
}
