import type { ChangeType, OmittedReason } from '../../shared/index.ts';
import { comparePathKeys, gitQuotePath, keyFromBytes, keyFromText, type PathKey } from '../paths/index.ts';

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
  return row.path_base64 ? keyFromBytes(Buffer.from(row.path_base64, 'base64')) : keyFromText(row.path);
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

/**
 * The whole change as one patch: the stored stanzas in path order; a binary, truncated or omitted
 * file only as a `# rundiff: <path> <reason>` comment line (git apply skips it), never a partial hunk;
 * `unstored` changed paths past the stored-row bound as one closing comment line.
 */
export function wholeRunPatch(files: readonly FilePatchRow[], unstored = 0): string {
  const sorted = files.map((f) => ({ f, key: rowKey(f) })).sort((x, y) => comparePathKeys(x.key, y.key));
  let out = '';
  for (const { f, key } of sorted) {
    const reason = withheld(f);
    if (reason === null) {
      out += f.patch!;
      if (!out.endsWith('\n')) out += '\n';
    } else {
      out += `# rundiff: ${gitQuotePath(key)} ${reason}\n`;
    }
  }
  // Paths past the stored-row bound have no name to list; the count says the patch is not the whole change.
  if (unstored > 0)
    out += `# rundiff: ${unstored} more changed ${unstored === 1 ? 'path' : 'paths'} not stored (rows)\n`;
  return out;
}
