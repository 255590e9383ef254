import { createHash } from 'node:crypto';
import { below, readHookText, removeHookFile, writeHookFile } from './hook-file.ts';
import { parseObject, type Syntax } from './json-file.ts';

/**
 * The bytes of a settings file as they were before rundiff first added its hooks, kept in the data
 * folder (not beside the file, where it would show up in the project). Uninstall writes them back
 * when what remains after removing rundiff's hooks is the same JSON, so the person's own formatting
 * comes back byte for byte; if they changed the file meanwhile, the edited JSON is written instead.
 * The backup folder is written like the settings files (`hook-file.ts`): a `hooks-backup` that is a
 * link out of the data folder is refused.
 */
export function createBackups(dataDir: string) {
  const fileOf = (settingsFile: string) =>
    below(dataDir, 'hooks-backup', `${createHash('sha256').update(settingsFile).digest('hex').slice(0, 32)}.json`);
  return {
    /** Keeps `text` unless a backup of this file already exists (the first install's wins). */
    keep(settingsFile: string, text: string): void {
      const file = fileOf(settingsFile);
      if (readHookText(file) !== null) return;
      writeHookFile(file, JSON.stringify({ file: settingsFile, text }), { perm: 0o600, folderMode: 0o700 });
    },
    /** The original text when it parses to the same JSON as `remaining`, else null. Drops the backup. */
    restore(settingsFile: string, remaining: unknown, syntax: Syntax = 'json'): string | null {
      const file = fileOf(settingsFile);
      let saved: { file?: unknown; text?: unknown };
      try {
        const text = readHookText(file);
        if (text === null) return null;
        saved = JSON.parse(text) as typeof saved;
      } catch {
        return null;
      }
      removeHookFile(file);
      if (saved.file !== settingsFile || typeof saved.text !== 'string') return null;
      try {
        return JSON.stringify(parseObject(settingsFile, saved.text, syntax)) === JSON.stringify(remaining)
          ? saved.text
          : null;
      } catch {
        return null;
      }
    },
    forget: (settingsFile: string): void => removeHookFile(fileOf(settingsFile)),
  };
}
export type Backups = ReturnType<typeof createBackups>;
