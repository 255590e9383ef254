import { keyFromBytes, type PathKey } from '../../paths/index.ts';

/**
 * Pure parser for one `git diff --raw --numstat -p -z` output: the raw records (modes, object ids,
 * status letters), then the numstat records (line counts, `-` for binary), then a NUL, then the
 * patch. Reading all three from one git process keeps the file list and the patch consistent.
 */

export interface DiffEntry {
  path: PathKey;
  oldPath: PathKey | null;
  /** git's status letter: A, M, D, R, C, T, U. */
  status: string;
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
  additions: number;
  deletions: number;
  binary: boolean;
  /** This file's stanza as byte offsets into `patch`; null when the output was cut before it ended. */
  stanza: { start: number; end: number } | null;
}

export interface ParsedDiff {
  entries: DiffEntry[];
  patch: Buffer;
}

interface RawRecord {
  status: string;
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
  path: PathKey;
  oldPath: PathKey | null;
}

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  /** The bytes up to the next NUL (consumed), or null when no NUL follows. */
  record(): Buffer | null {
    const nul = this.buf.indexOf(0, this.pos);
    if (nul === -1) return null;
    const rec = this.buf.subarray(this.pos, nul);
    this.pos = nul + 1;
    return rec;
  }
}

const STANZA_STARTS = ['diff --git ', 'diff --cc ', 'diff --combined ', '* Unmerged path '].map((s) =>
  Buffer.from(s, 'latin1'),
);

function startsWithAt(buf: Buffer, pos: number, prefix: Buffer): boolean {
  if (pos + prefix.length > buf.length) return false;
  return buf.compare(prefix, 0, prefix.length, pos, pos + prefix.length) === 0;
}

/** Byte offsets where a file's stanza begins in a patch (line starts only). */
export function findStanzaStarts(patch: Buffer): number[] {
  const starts: number[] = [];
  let pos = 0;
  while (pos < patch.length) {
    if (STANZA_STARTS.some((p) => startsWithAt(patch, pos, p))) starts.push(pos);
    const nl = patch.indexOf(10, pos);
    if (nl === -1) break;
    pos = nl + 1;
  }
  return starts;
}

export function parseDiffOutput(buf: Buffer, cut: boolean): ParsedDiff {
  const r = new Reader(buf);
  const raws: RawRecord[] = [];
  while (r.pos < buf.length && buf[r.pos] === 0x3a /* : */) {
    const head = r.record();
    if (head === null) break;
    if (head[1] === 0x3a) {
      // `::` = a combined record for an unmerged path: one path follows; status reports conflicts.
      r.record();
      continue;
    }
    const fields = head.subarray(1).toString('latin1').split(' ');
    const status = fields[4] ?? '';
    const first = r.record();
    if (first === null) break;
    let path = keyFromBytes(first);
    let oldPath: PathKey | null = null;
    if (status.startsWith('R') || status.startsWith('C')) {
      const second = r.record();
      if (second === null) break;
      oldPath = path;
      path = keyFromBytes(second);
    }
    raws.push({
      status: status.charAt(0),
      oldMode: fields[0] ?? '',
      newMode: fields[1] ?? '',
      oldOid: fields[2] ?? '',
      newOid: fields[3] ?? '',
      path,
      oldPath,
    });
  }
  const rawByPath = new Map<PathKey, RawRecord>();
  for (const raw of raws) rawByPath.set(raw.path, raw);

  const entries: DiffEntry[] = [];
  while (r.pos < buf.length && buf[r.pos] !== 0) {
    const rec = r.record();
    if (rec === null) break;
    const tab1 = rec.indexOf(9);
    const tab2 = rec.indexOf(9, tab1 + 1);
    if (tab1 === -1 || tab2 === -1) break;
    const add = rec.subarray(0, tab1).toString('latin1');
    const del = rec.subarray(tab1 + 1, tab2).toString('latin1');
    let path = keyFromBytes(rec.subarray(tab2 + 1));
    let oldPath: PathKey | null = null;
    if (path === '') {
      const src = r.record();
      const dst = r.record();
      if (src === null || dst === null) break;
      oldPath = keyFromBytes(src);
      path = keyFromBytes(dst);
    }
    const raw = rawByPath.get(path);
    const binary = add === '-' || del === '-';
    entries.push({
      path,
      oldPath: oldPath ?? raw?.oldPath ?? null,
      status: raw?.status ?? 'M',
      oldMode: raw?.oldMode ?? '',
      newMode: raw?.newMode ?? '',
      oldOid: raw?.oldOid ?? '',
      newOid: raw?.newOid ?? '',
      additions: binary ? 0 : Number(add) || 0,
      deletions: binary ? 0 : Number(del) || 0,
      binary,
      stanza: null,
    });
  }
  if (r.pos < buf.length && buf[r.pos] === 0) r.pos++;
  const patch = buf.subarray(r.pos);
  const starts = findStanzaStarts(patch);
  // git writes one stanza per numstat record, in the same order.
  for (let i = 0; i < entries.length && i < starts.length; i++) {
    const end = i + 1 < starts.length ? starts[i + 1]! : patch.length;
    const complete = !(cut && i === starts.length - 1);
    if (complete) entries[i]!.stanza = { start: starts[i]!, end };
  }
  return { entries, patch };
}

/** Line starts of hunk headers (`@@ `) inside `buf[start, end)`. */
export function hunkStarts(buf: Buffer, start: number, end: number): number[] {
  const out: number[] = [];
  let pos = start;
  while (pos < end) {
    if (buf[pos] === 0x40 && buf[pos + 1] === 0x40 && buf[pos + 2] === 0x20) out.push(pos);
    const nl = buf.indexOf(10, pos);
    if (nl === -1 || nl >= end) break;
    pos = nl + 1;
  }
  return out;
}

/** `index <old>..<new>` of a stanza (full ids with `--full-index`), or null when the stanza has none. */
export function stanzaNewOid(stanza: Buffer): string | null {
  let pos = 0;
  while (pos < stanza.length) {
    if (stanza[pos] === 0x40 /* @ */) return null; // past the header
    const nl = stanza.indexOf(10, pos);
    const line = stanza.subarray(pos, nl === -1 ? stanza.length : nl).toString('latin1');
    const m = /^index [0-9a-f]+\.\.([0-9a-f]+)/.exec(line);
    if (m) return m[1]!;
    if (nl === -1) break;
    pos = nl + 1;
  }
  return null;
}
