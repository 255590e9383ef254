import path from 'node:path';
import {
  below,
  isHookFolder,
  readHookText,
  removeEmptyHookFolder,
  removeHookFile,
  writeHookFile,
  type HookPath,
} from './hook-file.ts';

/**
 * The folders an install created (`.claude/`, `.gemini/`, `~/.config/opencode/`, `~/.cline/hooks/`,
 * ...), kept in the data folder beside the backups so that uninstall removes them again when they
 * are empty, and only those: a folder that was there before install is the person's. A folder
 * that holds anything at uninstall stays (and is forgotten). Once no install is recorded, the
 * backup folder itself goes when it is empty.
 */
interface Entry {
  agent: string;
  root: string;
  folder: string;
}

const LEDGER = 'folders.json';

export function createFolderLedger(dataDir: string) {
  const backupDir = below(dataDir, 'hooks-backup');
  const ledger = below(dataDir, 'hooks-backup', LEDGER);

  function read(): Entry[] {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readHookText(ledger) ?? '[]');
    } catch {
      return [];
    }
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (e): e is Entry =>
        typeof e === 'object' &&
        e !== null &&
        typeof (e as Entry).agent === 'string' &&
        typeof (e as Entry).root === 'string' &&
        typeof (e as Entry).folder === 'string',
    );
  }

  function write(entries: Entry[]): void {
    if (entries.length > 0)
      writeHookFile(ledger, `${JSON.stringify(entries, null, 2)}\n`, { perm: 0o600, folderMode: 0o700 });
    else removeHookFile(ledger);
  }

  return {
    /** The folders from below the root down to `where` (itself included) that are not there now. */
    missing(where: HookPath): HookPath[] {
      const rel = path.relative(where.root, where.file);
      if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return [];
      const parts = rel.split(path.sep);
      const out: HookPath[] = [];
      for (let i = 1; i <= parts.length; i++) {
        const folder = below(where.root, ...parts.slice(0, i));
        if (!isHookFolder(folder)) out.push(folder);
      }
      return out;
    },
    /** Records, for `agent`, those of `missing` that are folders now (the install made them). */
    record(agent: string, missing: readonly HookPath[]): void {
      const made = missing.filter(isHookFolder);
      if (made.length === 0) return;
      const entries = read();
      for (const f of made)
        if (!entries.some((e) => e.agent === agent && e.folder === f.file))
          entries.push({ agent, root: f.root, folder: f.file });
      write(entries);
    },
    /**
     * After an uninstall of `agent`: removes the empty folders its installs made, deepest first,
     * and forgets them all. Returns the folders removed.
     */
    sweep(agent: string): string[] {
      const entries = read();
      const mine = entries.filter((e) => e.agent === agent).sort((a, b) => b.folder.length - a.folder.length);
      const removed: string[] = [];
      for (const e of mine) {
        try {
          if (removeEmptyHookFolder({ root: e.root, file: e.folder })) removed.push(e.folder);
        } catch {
          // A folder now behind a link out of its root, or refused: it is left, and forgotten.
        }
      }
      if (mine.length > 0) write(entries.filter((e) => e.agent !== agent));
      try {
        removeEmptyHookFolder(backupDir);
      } catch {
        // The backup folder behind a link out of the data folder, or refused: it stays.
      }
      return removed;
    },
  };
}
export type FolderLedger = ReturnType<typeof createFolderLedger>;
