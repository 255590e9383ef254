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

export interface PlantedFilter {
  marker: string;
  markerExists: () => boolean;
  /** Removes the marker (after a positive control ran the filter). */
  clearMarker: () => void;
}

/**
 * Plants one filter driver named `name` (text, or raw bytes for a name that is not UTF-8) whose
 * command writes a marker, and selects it for `*.<ext>` files in `.git/info/attributes`. `form`
 * picks the clean/smudge commands or the long-running `process` form.
 */
export function plantFilterDriver(
  repo: TempRepo,
  name: string | Buffer,
  ext: string,
  form: 'clean' | 'process' = 'clean',
): PlantedFilter {
  const marker = path.join(path.dirname(repo.dir), `${path.basename(repo.dir)}-filter-marker`);
  const script = path.join(repo.dir, '.git', 'filter.sh');
  fs.writeFileSync(script, `#!/bin/sh\necho ran "$@" >> '${marker}'\nexec cat\n`, { mode: 0o755 });
  const raw = typeof name === 'string' ? Buffer.from(name, 'utf8') : name;
  // Written as bytes so that any name (quotes and backslashes escaped) reaches the config file as is.
  const sub = Buffer.from(
    raw.toString('latin1').replace(/["\\]/g, (c) => '\\' + c),
    'latin1',
  );
  const lines = form === 'process' ? [`\tprocess = ${script}`] : [`\tclean = ${script}`, `\tsmudge = ${script}`];
  fs.appendFileSync(
    path.join(repo.dir, '.git', 'config'),
    Buffer.concat([Buffer.from('[filter "'), sub, Buffer.from(`"]\n${lines.join('\n')}\n`)]),
  );
  fs.appendFileSync(
    path.join(repo.dir, '.git', 'info', 'attributes'),
    Buffer.concat([Buffer.from(`*.${ext} filter=`), raw, Buffer.from('\n')]),
  );
  return {
    marker,
    markerExists: () => fs.existsSync(marker),
    clearMarker: () => fs.rmSync(marker, { force: true }),
  };
}

/**
 * Positive controls for a hostile config: plain git, with every other planted mechanism switched
 * off by `-c` (an empty `process` also stops `clean`, so the filter is tried as planted), runs each in turn (the marker appears), so a test that finds no marker proves a
 * defence rather than a plant that never worked. Needs a tracked file with an unstaged edit and
 * `driver` selected as both `filter` and `diff` attribute. The pager is checked by the pager git
 * would start (git only starts one on a terminal). Runs after the assertions: some write `.git`.
 */
export function plantControls(repo: TempRepo, driver: string, marker: string): Record<string, boolean> {
  const off = {
    fsmonitor: ['-c', 'core.fsmonitor=false'],
    clean: ['-c', `filter.${driver}.clean=`, '-c', `filter.${driver}.required=false`],
    process: ['-c', `filter.${driver}.process=`, '-c', `filter.${driver}.required=false`],
  };
  const attempt = (args: string[]): boolean => {
    fs.rmSync(marker, { force: true });
    try {
      repo.git(...args);
    } catch {
      /* a planted script need not do its job well; that it started is what counts */
    }
    const ran = fs.existsSync(marker);
    fs.rmSync(marker, { force: true });
    return ran;
  };
  const pager = repo.git('var', 'GIT_PAGER').trim();
  return {
    fsmonitor: attempt([...off.clean, ...off.process, 'status']),
    hooks: attempt(['hook', 'run', 'pre-commit']),
    pager: pager !== 'cat' && pager !== 'less' && pager !== '',
    external_diff: attempt([...off.fsmonitor, ...off.clean, ...off.process, 'diff']),
    textconv: attempt([...off.fsmonitor, ...off.clean, ...off.process, 'diff', '--no-ext-diff']),
    // Whichever form is planted: with a `process` command set, git never uses `clean`.
    filter: attempt([...off.fsmonitor, 'diff', '--no-ext-diff', '--no-textconv']),
  };
}

/** What `plantControls` returns when every plant works. */
export const ALL_PLANTS_RAN = {
  fsmonitor: true,
  hooks: true,
  pager: true,
  external_diff: true,
  textconv: true,
  filter: true,
} as const;
