import type { ChangeType, OmittedReason } from '../../shared/index.ts';
import { comparePathKeys, gitQuotePath, keyFromShown, type PathKey } from '../paths/index.ts';

/** A stored file row, as much of it as the whole-run patch needs. */
export interface FilePatchRow {
  path: string;
  /** Raw name bytes (base64) when the name is not valid UTF-8. */
  path_base64?: string | null;
  change_type: ChangeType;
  binary: boolean;
  truncated: boolean;
  omitted_reason: OmittedReason | null;
  patch: string | null;
}

function rowKey(row: FilePatchRow): PathKey {
  return keyFromShown(row.path, row.path_base64);
}

/** Why a row has no applicable stanza, or null when its stored stanza is whole. */
function withheld(row: FilePatchRow): string | null {
  if (row.omitted_reason === 'unreadable') return 'unreadable'; // as the row says, binary or not
  if (row.binary && row.patch === null) return 'binary'; // a binary with its patch kept changed no byte
  if (row.truncated) return 'truncated';
  if (row.omitted_reason) return row.omitted_reason;
  if (row.patch === null) return 'omitted';
  return null;
}

/** The whole patch's parts in order: one stanza (or comment line) per row, then the closing note. */
type Part<T> = { row: T; key: PathKey; reason: string | null } | { unstored: number };

function partsOf<T extends FilePatchRow>(files: readonly T[], unstored: number): Part<T>[] {
  const sorted = files.map((f) => ({ row: f, key: rowKey(f) })).sort((x, y) => comparePathKeys(x.key, y.key));
  const parts: Part<T>[] = sorted.map(({ row, key }) => ({ row, key, reason: withheld(row) }));
  if (unstored > 0) parts.push({ unstored });
  return parts;
}

const ended = (text: string) => (text.endsWith('\n') ? text : text + '\n');
const endedBytes = (bytes: Buffer) =>
  bytes[bytes.length - 1] === 0x0a ? bytes : Buffer.concat([bytes, Buffer.from('\n')]);
const commentFor = (key: PathKey, reason: string) => `# rundiff: ${gitQuotePath(key)} ${reason}\n`;
// Paths past the stored-row bound have no name to list; the count says the patch is not the whole change.
const unstoredNote = (n: number) => `# rundiff: ${n} more changed ${n === 1 ? 'path' : 'paths'} not stored (rows)\n`;

/**
 * The whole change as one patch: the stored stanzas in path order; a binary, truncated or omitted
 * file only as a `# rundiff: <path> <reason>` comment line (git apply skips it), never a partial hunk;
 * `unstored` changed paths past the stored-row bound as one closing comment line.
 */
export function wholeRunPatch(files: readonly FilePatchRow[], unstored = 0): string {
  let out = '';
  for (const p of partsOf(files, unstored)) {
    if ('unstored' in p) out += unstoredNote(p.unstored);
    else out += p.reason === null ? ended(p.row.patch!) : commentFor(p.key, p.reason);
  }
  return out;
}

/**
 * The whole patch a piece at a time, each withheld row first offered to `fill` (its whole stanza
 * from elsewhere, e.g. kept contents, or null to keep the comment line). A filled stanza that is
 * itself cut is not applicable either: `fill` answers only whole ones. A stanza that is not UTF-8
 * text (a Latin-1 file) comes as git's bytes, and goes as them.
 */
export async function* wholeRunPatchParts<T extends FilePatchRow>(
  files: readonly T[],
  unstored: number,
  fill: (row: T, reason: string) => Promise<string | Buffer | null>,
): AsyncGenerator<string | Buffer> {
  for (const p of partsOf(files, unstored)) {
    if ('unstored' in p) yield unstoredNote(p.unstored);
    else if (p.reason === null) yield ended(p.row.patch!);
    else {
      const filled = await fill(p.row, p.reason);
      yield filled === null
        ? commentFor(p.key, p.reason)
        : typeof filled === 'string'
          ? ended(filled)
          : endedBytes(filled);
    }
  }
}
