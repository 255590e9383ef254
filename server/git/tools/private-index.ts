import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../../errors.ts';
import { keyFromText } from '../../paths/index.ts';
import { openInside, readFdExact, safeRoot } from '../../fs/index.ts';

/**
 * Runs `fn` with a private copy of the index in GIT_INDEX_FILE. `git diff` against the work tree
 * refreshes the index and writes it back whenever it can take the lock (GIT_OPTIONAL_LOCKS does not
 * stop it); on a copy, the user's `.git/index` stays byte-identical. The index is read like any
 * workspace file: a symlink or FIFO in its place is refused, never followed or waited on.
 */
export async function withPrivateIndex<T>(gitDir: string, fn: (env: Record<string, string>) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-index-'));
  try {
    const copy = path.join(dir, 'index');
    const opened = openInside(safeRoot(gitDir), keyFromText('index'));
    if (opened.kind === 'file') {
      try {
        const buf = Buffer.allocUnsafe(opened.stat.size + 1);
        if (!readFdExact(opened.fd, buf, 0, opened.stat.size)) {
          throw new AppError('git_failed', 'the index changed while it was read', {
            hint: 'Another git command was writing the index; retry.',
          });
        }
        fs.writeFileSync(copy, buf.subarray(0, opened.stat.size), { mode: 0o600 });
      } finally {
        fs.closeSync(opened.fd);
      }
      // git trusts an entry's stat data only when the file is older than the index file (the
      // "racy git" rule); a fresh copy would look newer, so it is dated before the original.
      const earlier = new Date(opened.stat.mtimeMs - 2000);
      fs.utimesSync(copy, earlier, earlier);
    } else if (opened.kind !== 'absent') {
      throw new AppError('git_failed', 'the repository index is not a regular file', {
        hint: 'Something replaced .git/index (with a link, a pipe or a folder); restore it, for example with git reset.',
        details: { index: opened.kind === 'unreadable' ? opened.reason : opened.kind },
      });
    }
    return await fn({ GIT_INDEX_FILE: copy });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
