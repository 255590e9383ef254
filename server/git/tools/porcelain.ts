import { keyFromBytes, type PathKey } from '../../paths/index.ts';
import { AppError } from '../../errors.ts';

/**
 * Pure parser for `git status --porcelain=v2 -z --branch`: records are NUL-terminated, a rename
 * record (`2`) is followed by its original path as one more record, and a path is everything after
 * a fixed number of space-separated fields, so names with spaces, newlines or any bytes survive.
 */

export type StatusKind = 'changed' | 'renamed' | 'unmerged' | 'untracked' | 'ignored';

export interface StatusEntry {
  kind: StatusKind;
  /** Index letter (`.` when unchanged); `?` for untracked. */
  x: string;
  /** Work-tree letter. */
  y: string;
  path: PathKey;
  oldPath: PathKey | null;
}

export interface StatusReport {
  /** Commit id of HEAD, null when the branch is unborn. */
  oid: string | null;
  /** Branch name, null when detached. */
  head: string | null;
  upstream: string | null;
  ahead: number;
  behind: number;
  entries: StatusEntry[];
}

/** Index just past the `count`-th space of `rec` (fields before the path). */
function afterFields(rec: Buffer, count: number): number {
  let pos = 0;
  for (let i = 0; i < count; i++) {
    const sp = rec.indexOf(0x20, pos);
    if (sp === -1)
      throw new AppError('git_failed', 'unexpected git status output', {
        details: { record: rec.toString('utf8').slice(0, 200) },
      });
    pos = sp + 1;
  }
  return pos;
}

export function parseStatusV2(buf: Buffer): StatusReport {
  const report: StatusReport = { oid: null, head: null, upstream: null, ahead: 0, behind: 0, entries: [] };
  const records: Buffer[] = [];
  let start = 0;
  for (;;) {
    const nul = buf.indexOf(0, start);
    if (nul === -1) break;
    records.push(buf.subarray(start, nul));
    start = nul + 1;
  }
  for (let i = 0; i < records.length; i++) {
    const rec = records[i]!;
    if (rec.length === 0) continue;
    const type = String.fromCharCode(rec[0]!);
    if (type === '#') {
      const line = rec.toString('utf8');
      const m = /^# branch\.(\w+) (.*)$/s.exec(line);
      if (!m) continue;
      const [, key, value] = m as unknown as [string, string, string];
      if (key === 'oid') report.oid = value === '(initial)' ? null : value;
      else if (key === 'head') report.head = value === '(detached)' ? null : value;
      else if (key === 'upstream') report.upstream = value;
      else if (key === 'ab') {
        const ab = /^\+(\d+) -(\d+)$/.exec(value);
        if (ab) {
          report.ahead = Number(ab[1]);
          report.behind = Number(ab[2]);
        }
      }
      continue;
    }
    const x = String.fromCharCode(rec[2] ?? 0x2e);
    const y = String.fromCharCode(rec[3] ?? 0x2e);
    if (type === '1') {
      report.entries.push({
        kind: 'changed',
        x,
        y,
        path: keyFromBytes(rec.subarray(afterFields(rec, 8))),
        oldPath: null,
      });
    } else if (type === '2') {
      const path = keyFromBytes(rec.subarray(afterFields(rec, 9)));
      const orig = records[++i];
      report.entries.push({ kind: 'renamed', x, y, path, oldPath: orig ? keyFromBytes(orig) : null });
    } else if (type === 'u') {
      report.entries.push({
        kind: 'unmerged',
        x,
        y,
        path: keyFromBytes(rec.subarray(afterFields(rec, 10))),
        oldPath: null,
      });
    } else if (type === '?' || type === '!') {
      report.entries.push({
        kind: type === '?' ? 'untracked' : 'ignored',
        x: type,
        y: type,
        path: keyFromBytes(rec.subarray(2)),
        oldPath: null,
      });
    }
  }
  return report;
}
