import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { LineDiff } from '../delta/index.ts';
import { runGit } from './runner.ts';
import { NO_ATTRIBUTES, SCRATCH_PREFIX } from './scratch-repo.ts';

/**
 * Line diffs of many pairs in one git process: the pairs are written as `x/<i>` and `y/<i>` in a
 * scratch folder and one `git diff --no-index` answers them all, with git's own Myers variant and
 * heuristics (its counts are not always minimal, so only git itself reproduces `git diff --numstat`).
 */

/** Spawn and start-up allowance on top of the per-file budgets (ms): a busy machine needs it. */
const SPAWN_SLACK_MS = 1_000;

export async function diffPairs(
  pairs: ReadonlyArray<{ before: Buffer; after: Buffer }>,
  timeoutMsPerFile: number,
  tmpRoot: string,
  gitBinary?: string,
): Promise<Array<LineDiff | null>> {
  if (pairs.length === 0) return [];
  const deadline = Date.now() + timeoutMsPerFile * pairs.length + SPAWN_SLACK_MS;
  let dir: string | null = null;
  try {
    dir = await mkdtemp(path.join(tmpRoot, SCRATCH_PREFIX));
    // Pair i is x/i against y/i: no name needs quoting and nothing can be paired across files.
    await mkdir(path.join(dir, 'x'));
    await mkdir(path.join(dir, 'y'));
    const root = dir;
    await Promise.all(
      pairs.flatMap((p, i) => [
        writeFile(path.join(root, 'x', String(i)), p.before),
        writeFile(path.join(root, 'y', String(i)), p.after),
      ]),
    );
    const res = await runGit({
      cwd: dir,
      // Never look for a repository above the scratch folder, never read a global attributes file:
      // the comparison is of the bytes alone, as git compares two blobs.
      env: { GIT_CEILING_DIRECTORIES: path.dirname(dir) },
      config: NO_ATTRIBUTES,
      args: [
        'diff',
        '--no-index',
        '--no-renames',
        '-z',
        '--numstat',
        '-p',
        '-U3',
        '--no-ext-diff',
        '--no-textconv',
        '--',
        'x',
        'y',
      ],
      okExitCodes: [0, 1],
      timeoutMs: Math.max(1, deadline - Date.now()),
      gitBinary,
    });
    return parseNumstatPatch(res.stdout, pairs.length);
  } catch {
    return pairs.map(() => null);
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Splits `git diff --no-index -z --numstat -p x y` output: NUL-terminated numstat records (each
 * `add TAB del TAB` then NUL, `x/i`, NUL, `y/i`, because the two names differ), an empty record,
 * then one stanza per differing pair. Pairs git did not list are equal (0/0).
 */
export function parseNumstatPatch(buf: Buffer, count: number): Array<LineDiff | null> {
  const out: Array<LineDiff | null> = Array.from({ length: count }, () => ({
    additions: 0,
    deletions: 0,
    hunks: Buffer.alloc(0),
  }));
  const fields: string[] = [];
  let pos = 0;
  for (;;) {
    const nul = buf.indexOf(0, pos);
    if (nul === -1) {
      pos = buf.length;
      break;
    }
    const rec = buf.subarray(pos, nul).toString('latin1');
    pos = nul + 1;
    if (rec === '') break;
    fields.push(rec);
  }
  for (let k = 0; k < fields.length; k++) {
    const [a, d, name] = fields[k]!.split('\t');
    let index = name;
    if (name === '') {
      index = fields[k + 1];
      k += 2;
    }
    const i = Number(/^x\/(\d+)$/.exec(index ?? '')?.[1] ?? NaN);
    if (!Number.isInteger(i) || i < 0 || i >= count) continue;
    // "-" = git found the pair binary: the caller judged it text, so it has no line diff here.
    out[i] = a === '-' || d === '-' ? null : { additions: Number(a), deletions: Number(d), hunks: Buffer.alloc(0) };
  }
  const text = buf.subarray(pos).toString('latin1');
  const header = /^diff --git a\/x\/(\d+) b\/y\/\d+\n/gm;
  const starts: Array<{ at: number; index: number }> = [];
  for (let m = header.exec(text); m; m = header.exec(text)) starts.push({ at: m.index, index: Number(m[1]) });
  starts.forEach((s, k) => {
    const end = k + 1 < starts.length ? starts[k + 1]!.at : text.length;
    const stanza = text.slice(s.at, end);
    const hunkAt = stanza.indexOf('\n@@');
    const entry = out[s.index];
    if (entry && hunkAt !== -1) entry.hunks = Buffer.from(stanza.slice(hunkAt + 1), 'latin1');
  });
  return out;
}
