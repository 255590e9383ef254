import type { RenamePair, RenameResult, RenameSide } from '../delta/index.ts';
import { keyFromBytes, keyToBytes, type PathKey } from '../paths/index.ts';
import { gitBlobId, ImportStream, importStream } from './fast-import.ts';
import { runGit } from './runner.ts';
import { NO_ATTRIBUTES, withScratchRepo } from './scratch-repo.ts';

/**
 * Rename pairing by git itself: the deleted and added sides become two trees in a throw-away bare
 * repository, and `git diff-tree -M` pairs them with diffcore-rename (exact first, 50% similarity,
 * tie-breaks, rename limit).
 */

/** A gitattributes pattern matching exactly this path (whitespace and controls match as `?`). */
export function attributePattern(pathBytes: Buffer): Buffer {
  const out: number[] = [0x2f];
  for (const b of pathBytes) {
    if (b === 0x2a || b === 0x3f || b === 0x5b || b === 0x5c) out.push(0x5c, b);
    else if (b <= 0x20 || b === 0x22 || b === 0x7f) out.push(0x3f);
    else out.push(b);
  }
  return Buffer.from(out);
}

const HEX40 = /^[0-9a-f]{40}$/;

/** The commit a gitlink side points at, from its oid or its `Subproject commit <sha>` text. */
function gitlinkTarget(side: RenameSide): string | null {
  if (side.oid && HEX40.test(side.oid)) return side.oid;
  const m = side.bytes ? /^Subproject commit ([0-9a-f]{40})/.exec(side.bytes.toString('latin1')) : null;
  return m?.[1] ?? null;
}

export async function detectRenames(
  deleted: RenameSide[],
  added: RenameSide[],
  timeoutMs: number,
  tmpRoot: string,
  maxRenameBytes: number,
  gitBinary?: string,
): Promise<RenameResult> {
  if (deleted.length === 0 || added.length === 0) return { pairs: [] };
  const all = [...deleted, ...added];
  let total = 0;
  for (const s of all) total += s.bytes?.length ?? 0;
  if (total > maxRenameBytes) return { pairs: [], degraded: 'degraded' };

  // A side without bytes still pairs by identity: borrow the bytes of any side with the same blob id,
  // else stand in a unique placeholder per oid (equal oids stay equal, nothing else is similar).
  const byBlobId = new Map<string, Buffer>();
  for (const s of all) if (s.bytes && s.mode !== '160000') byBlobId.set(gitBlobId(s.bytes), s.bytes);
  let unknown = 0;
  const contentOf = (s: RenameSide): Buffer => {
    if (s.bytes) return s.bytes;
    const borrowed = s.oid ? byBlobId.get(s.oid) : undefined;
    if (borrowed) return borrowed;
    return Buffer.from(`\0rundiff: content unavailable ${s.oid ?? `#${unknown++}`}\n`);
  };

  const stream = new ImportStream();
  const entries = (sides: RenameSide[]) => {
    const out: Array<{ mode: string; dataref: string; path: PathKey }> = [];
    for (const s of sides) {
      if (s.mode === '160000') {
        const target = gitlinkTarget(s);
        if (target) out.push({ mode: s.mode, dataref: target, path: s.path });
        continue;
      }
      out.push({ mode: s.mode, dataref: stream.blob(contentOf(s)), path: s.path });
    }
    return out;
  };
  stream.commit('a', entries(deleted));
  stream.commit('b', entries(added));
  const binaries = all.filter((s) => s.binaryAttr);
  const attributes = binaries.length
    ? Buffer.concat(binaries.flatMap((s) => [attributePattern(keyToBytes(s.path)), Buffer.from(' binary\n')]))
    : null;

  const deadline = Date.now() + timeoutMs;
  try {
    return await withScratchRepo(tmpRoot, attributes, async (s) => {
      await importStream(s, stream.finish(), Math.max(1, deadline - Date.now()), gitBinary);
      const res = await runGit({
        cwd: s.cwd,
        env: { GIT_DIR: s.gitDir },
        config: NO_ATTRIBUTES,
        args: ['diff-tree', '-r', '-z', '--raw', '-M', 'refs/heads/a', 'refs/heads/b'],
        timeoutMs: Math.max(1, deadline - Date.now()),
        gitBinary,
      });
      return { pairs: parseRawRenames(res.stdout) };
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    return { pairs: [], degraded: code === 'git_timeout' ? 'git_timeout' : 'degraded' };
  }
}

/** The `R<score>` records of `git diff-tree --raw -z` output. */
export function parseRawRenames(buf: Buffer): RenamePair[] {
  const fields: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0) {
      fields.push(buf.subarray(start, i));
      start = i + 1;
    }
  }
  const pairs: RenamePair[] = [];
  for (let i = 0; i < fields.length;) {
    const meta = fields[i]!.toString('latin1');
    const status = meta.split(' ')[4] ?? '';
    if (status.startsWith('R') || status.startsWith('C')) {
      const from = fields[i + 1];
      const to = fields[i + 2];
      if (status.startsWith('R') && from && to) {
        pairs.push({ from: keyFromBytes(from), to: keyFromBytes(to), similarity: Number(status.slice(1)) });
      }
      i += 3;
    } else {
      i += 2;
    }
  }
  return pairs;
}
