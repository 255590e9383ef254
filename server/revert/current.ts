import { createHash } from 'node:crypto';
import { readInside, type KeptAttributes, type SafeRoot } from '../fs/index.ts';
import type { PathKey } from '../paths/index.ts';

/** What stands at a path in the workspace now, as a revert needs to know it. */
export type Current =
  | { kind: 'absent' }
  /** `keep`: a regular file's permission bits and owner, carried over when it is replaced. */
  | { kind: 'entry'; bytes: Buffer; mode: string; sha256: string; keep?: KeptAttributes }
  | { kind: 'too_large' }
  | { kind: 'unreadable'; outside: boolean; why: string };

export const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Reads a path below the root through the safe reader (no link followed, nothing outside the root). */
export function readCurrent(root: SafeRoot, key: PathKey, maxBytes: number): Current {
  const r = readInside(root, key, maxBytes);
  switch (r.kind) {
    case 'absent':
      return { kind: 'absent' };
    case 'file': {
      // git keeps only the executable bit of a file's mode.
      const mode = (r.mode & 0o111) !== 0 ? '100755' : '100644';
      const keep = { perm: r.mode & 0o7777, uid: r.uid, gid: r.gid };
      return { kind: 'entry', bytes: r.bytes, mode, sha256: sha256Of(r.bytes), keep };
    }
    case 'symlink':
      return { kind: 'entry', bytes: r.target, mode: '120000', sha256: sha256Of(r.target) };
    case 'too_large':
      return { kind: 'too_large' };
    case 'unreadable':
      return {
        kind: 'unreadable',
        outside: r.reason === 'outside_root',
        why:
          r.reason === 'outside_root' ? 'a folder on its path leads outside the workspace' : `unreadable (${r.reason})`,
      };
  }
}

/** Identity of what stands at a path, to see that nothing moved between the plan and the write. */
export function fingerprint(c: Current): string {
  switch (c.kind) {
    case 'absent':
      return 'absent';
    case 'entry':
      // The permission bits too: a chmod between the plan and the write would be undone silently.
      return `${c.mode}:${(c.keep?.perm ?? 0).toString(8)}:${c.sha256}`;
    default:
      return c.kind;
  }
}
