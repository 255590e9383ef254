import { describe, expect, it } from 'vitest';
import { parsePatch } from './lines.ts';
import {
  binarySizes,
  bodyLines,
  formatSize,
  headerLabels,
  lineEndingLabel,
  patchChangeType,
  readHeader,
} from './header.ts';

const patch = (...lines: string[]) => parsePatch(lines.join('\n') + '\n');

describe('patch change type', () => {
  it('reads added, deleted and modified from git header lines, renamed from the reported old path', () => {
    expect(patchChangeType(patch('diff --git a/n b/n', 'new file mode 100755', '@@ -0,0 +1 @@', '+x'), null)).toBe(
      'added',
    );
    expect(patchChangeType(patch('diff --git a/d b/d', 'deleted file mode 100644', '@@ -1 +0,0 @@', '-x'), null)).toBe(
      'deleted',
    );
    expect(patchChangeType(patch('diff --git a/m b/m', 'index 1..2 100644', '@@ -1 +1 @@', '-x', '+y'), null)).toBe(
      'modified',
    );
    expect(patchChangeType(patch('diff --git a/a b/b', 'similarity index 100%'), 'a')).toBe('renamed');
    // a content line that looks like a header is not one
    expect(patchChangeType(patch('diff --git a/m b/m', '@@ -1 +1 @@', '-x', '+new file mode 1'), null)).toBe(
      'modified',
    );
  });
});

describe('header labels', () => {
  it('a rename without content changes is said in words, not as git header lines', () => {
    const lines = patch(
      'diff --git a/old.ts b/new.ts',
      'similarity index 100%',
      'rename from old.ts',
      'rename to new.ts',
    );
    expect(headerLabels({ change_type: 'renamed', old_path: 'old.ts' }, lines)).toEqual([
      'renamed from old.ts without changes',
    ]);
    expect(bodyLines(lines)).toEqual([]);
  });

  it('a rename with edits keeps its hunks and says how similar the files are', () => {
    const lines = patch(
      'diff --git a/a.ts b/b.ts',
      'similarity index 87%',
      'rename from a.ts',
      'rename to b.ts',
      'index 1111111..2222222 100644',
      '--- a/a.ts',
      '+++ b/b.ts',
      '@@ -1 +1 @@',
      '-x',
      '+y',
    );
    expect(headerLabels({ change_type: 'renamed', old_path: 'a.ts' }, lines)).toEqual([
      'renamed from a.ts (87% similar)',
    ]);
    expect(bodyLines(lines).map((l) => l.kind)).toEqual(['hunk', 'del', 'add']);
  });

  it('a mode change reads `mode 644 -> 755`', () => {
    const lines = patch('diff --git a/run.sh b/run.sh', 'old mode 100644', 'new mode 100755');
    expect(readHeader(lines)).toMatchObject({ oldMode: '100644', newMode: '100755', hasHunks: false });
    expect(headerLabels({ change_type: 'modified', old_path: null }, lines)).toEqual(['mode 644 -> 755']);
  });

  it('same mode on both sides (the index line) says nothing more than the hunks', () => {
    const lines = patch(
      'diff --git a/a b/a',
      'index 1111111..2222222 100644',
      '--- a/a',
      '+++ b/a',
      '@@ -1 +1 @@',
      '-a',
      '+b',
    );
    expect(headerLabels({ change_type: 'modified', old_path: null }, lines)).toEqual([]);
  });

  it('an added symlink reads `symlink -> target`', () => {
    const lines = patch(
      'diff --git a/link b/link',
      'new file mode 120000',
      'index 0000000..1111111',
      '--- /dev/null',
      '+++ b/link',
      '@@ -0,0 +1 @@',
      '+target/file.txt',
      '\\ No newline at end of file',
    );
    expect(headerLabels({ change_type: 'added', old_path: null }, lines)).toEqual(['symlink -> target/file.txt']);
  });

  it('a retargeted symlink names both targets', () => {
    const lines = patch(
      'diff --git a/link b/link',
      'index 1111111..2222222 120000',
      '--- a/link',
      '+++ b/link',
      '@@ -1 +1 @@',
      '-one',
      '\\ No newline at end of file',
      '+two',
      '\\ No newline at end of file',
    );
    expect(headerLabels({ change_type: 'modified', old_path: null }, lines)).toEqual(['symlink -> two (was -> one)']);
  });

  it('a symlink replaced by a file (two stanzas) says so', () => {
    const lines = patch(
      'diff --git a/p b/p',
      'deleted file mode 120000',
      'index 1111111..0000000',
      '--- a/p',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-dest',
      '\\ No newline at end of file',
      'diff --git a/p b/p',
      'new file mode 100644',
      'index 0000000..2222222',
      '--- /dev/null',
      '+++ b/p',
      '@@ -0,0 +1 @@',
      '+text',
    );
    expect(headerLabels({ change_type: 'modified', old_path: null }, lines)).toEqual([
      'symlink -> dest replaced by a file',
    ]);
    expect(bodyLines(lines).some((l) => l.text.startsWith('diff --git'))).toBe(false);
  });

  it('an executable new file and an empty new file are named', () => {
    expect(
      headerLabels({ change_type: 'added', old_path: null }, patch('diff --git a/x b/x', 'new file mode 100755')),
    ).toEqual(['new file, mode 755']);
    expect(
      headerLabels({ change_type: 'added', old_path: null }, patch('diff --git a/x b/x', 'new file mode 100644')),
    ).toEqual(['new empty file']);
  });

  it("git's Binary files line makes a new binary file, not a new empty one", () => {
    const added = patch(
      'diff --git a/img.bin b/img.bin',
      'new file mode 100644',
      'index 0000000..1234567',
      'Binary files /dev/null and b/img.bin differ',
    );
    expect(headerLabels({ change_type: patchChangeType(added, null), old_path: null }, added)).toEqual([
      'new binary file',
    ]);
    const gone = patch('diff --git a/x b/x', 'deleted file mode 100644', 'Binary files a/x and /dev/null differ');
    expect(headerLabels({ change_type: 'deleted', old_path: null }, gone)).toEqual(['binary file deleted']);
    const changed = patch('diff --git a/x b/x', 'index 1..2 100644', 'Binary files a/x and b/x differ');
    expect(headerLabels({ change_type: 'modified', old_path: null }, changed)).toEqual(['binary file changed']);
  });
});

describe('binary sizes', () => {
  it('reads before -> after in bytes, KiB and MiB', () => {
    expect(formatSize(512)).toBe('512 B');
    expect(formatSize(1536)).toBe('1.5 KiB');
    expect(formatSize(3 * 1024 * 1024)).toBe('3.0 MiB');
    expect(binarySizes({ change_type: 'modified', size_before: 512, size_after: 1536 })).toBe(
      'binary: 512 B -> 1.5 KiB',
    );
    expect(binarySizes({ change_type: 'added', size_before: null, size_after: 2048 })).toBe('binary: new, 2.0 KiB');
    expect(binarySizes({ change_type: 'deleted', size_before: 10, size_after: null })).toBe('binary: 10 B, deleted');
  });
});

describe('a change of line endings only', () => {
  const head = 'diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n';
  it('is labelled LF → CRLF or CRLF → LF when every changed line only changed its ending', () => {
    expect(lineEndingLabel(`${head}@@ -1,2 +1,2 @@\n-a\n-b\n+a\r\n+b\r\n`)).toBe('line endings LF → CRLF');
    expect(lineEndingLabel(`${head}@@ -1,3 +1,3 @@\n-a\r\n+a\n x\n-b\r\n+b\n`)).toBe('line endings CRLF → LF');
    expect(lineEndingLabel(`${head}@@ -1,2 +1,2 @@\n-a\n+a\r\n-b\r\n+b\n`)).toBe('line endings changed');
  });
  it('is not labelled when any line changed its text too', () => {
    expect(lineEndingLabel(`${head}@@ -1,2 +1,2 @@\n-a\n-b\n+a\r\n+B\r\n`)).toBeNull();
    expect(lineEndingLabel(`${head}@@ -1 +1,2 @@\n-a\n+a\r\n+more\n`)).toBeNull();
    expect(lineEndingLabel(`${head}@@ -1 +1 @@\n-a\n+b\n`)).toBeNull();
  });
});
