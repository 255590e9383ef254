import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The bytes of a settings file as they were before rundiff first added its hooks, kept in the data
 * folder (not beside the file, where it would show up in the project). Uninstall writes them back
 * when what remains after removing rundiff's hooks is the same JSON, so the person's own formatting
 * comes back byte for byte; if they changed the file meanwhile, the edited JSON is written instead.
 */
export function createBackups(dataDir: string) {
  const dir = path.join(dataDir, 'hooks-backup');
  const fileOf = (settingsFile: string) =>
    path.join(dir, `${createHash('sha256').update(settingsFile).digest('hex').slice(0, 32)}.json`);
  return {
    /** Keeps `text` unless a backup of this file already exists (the first install's wins). */
    keep(settingsFile: string, text: string): void {
      const file = fileOf(settingsFile);
      if (fs.existsSync(file)) return;
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(file, JSON.stringify({ file: settingsFile, text }), { mode: 0o600 });
    },
    /** The original text when it parses to the same JSON as `remaining`, else null. Drops the backup. */
    restore(settingsFile: string, remaining: unknown): string | null {
      const file = fileOf(settingsFile);
      let saved: { file?: unknown; text?: unknown };
      try {
        saved = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof saved;
      } catch {
        return null;
      }
      fs.rmSync(file, { force: true });
      if (saved.file !== settingsFile || typeof saved.text !== 'string') return null;
      try {
        return JSON.stringify(JSON.parse(saved.text)) === JSON.stringify(remaining) ? saved.text : null;
      } catch {
        return null;
      }
    },
    forget: (settingsFile: string): void => fs.rmSync(fileOf(settingsFile), { force: true }),
  };
}
export type Backups = ReturnType<typeof createBackups>;
