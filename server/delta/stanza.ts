import { gitQuotePath, type PathKey } from '../paths/index.ts';

/** One file's stanza in `git diff` format: header lines as git writes them, then the hunks. */

export interface StanzaInput {
  /** null = the file is new. */
  oldPath: PathKey | null;
  /** null = the file is gone. */
  newPath: PathKey | null;
  oldMode: string | null;
  newMode: string | null;
  /** Full object ids for the `index` line (absent side = null); no `index` line when they are equal. */
  oldOid: string | null;
  newOid: string | null;
  /** Set for a rename: git's similarity index in percent. */
  similarity?: number;
  /**
   * The body is a git binary patch (`binary-patch.ts`): the `index` line names the full object ids
   * (git apply checks them) and no `---`/`+++` lines come before it.
   */
  binary?: boolean;
  hunks: Buffer;
}

/** git abbreviates object ids to 7 hex digits by default (more only to stay unique in a big repository). */
const ABBREV = 7;
const NULL_OID = '0'.repeat(ABBREV);

const abbrev = (oid: string | null): string => (oid ? oid.slice(0, ABBREV) : NULL_OID);
/** An absent side's id at full length, as `git diff --binary` writes it. */
const full = (oid: string | null): string => oid ?? '0'.repeat(40);

export function formatStanza(s: StanzaInput): Buffer {
  const oldName = s.oldPath ?? s.newPath!;
  const newName = s.newPath ?? s.oldPath!;
  const a = gitQuotePath(`a/${oldName}`);
  const b = gitQuotePath(`b/${newName}`);
  const lines = [`diff --git ${a} ${b}`];
  if (s.oldPath === null) {
    lines.push(`new file mode ${s.newMode}`);
  } else if (s.newPath === null) {
    lines.push(`deleted file mode ${s.oldMode}`);
  } else {
    if (s.oldMode !== s.newMode) lines.push(`old mode ${s.oldMode}`, `new mode ${s.newMode}`);
    if (s.similarity !== undefined) {
      lines.push(
        `similarity index ${s.similarity}%`,
        `rename from ${gitQuotePath(s.oldPath)}`,
        `rename to ${gitQuotePath(s.newPath)}`,
      );
    }
  }
  if (s.oldOid !== s.newOid) {
    const sameMode = s.oldPath !== null && s.newPath !== null && s.oldMode === s.newMode;
    const ids = s.binary ? `${full(s.oldOid)}..${full(s.newOid)}` : `${abbrev(s.oldOid)}..${abbrev(s.newOid)}`;
    lines.push(`index ${ids}${sameMode ? ` ${s.oldMode}` : ''}`);
  }
  if (s.hunks.length > 0 && !s.binary) {
    // git ends a file label holding a space with a TAB, so the name is not read as name + timestamp.
    const label = (l: string) => (l.includes(' ') ? `${l}\t` : l);
    lines.push(
      `--- ${label(s.oldPath === null ? '/dev/null' : a)}`,
      `+++ ${label(s.newPath === null ? '/dev/null' : b)}`,
    );
  }
  return Buffer.concat([Buffer.from(lines.join('\n') + '\n', 'utf8'), s.hunks]);
}
