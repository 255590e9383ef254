import { describe, expect, it } from 'vitest';
import { buildFileTree, compactRename, naturalCompare, treeFileLabel, treeRows, type TreeInput } from './file-tree.ts';

const row = (path: string, additions = 1, deletions = 0, old_path: string | null = null): TreeInput => ({
  id: path,
  path,
  old_path,
  change_type: old_path ? 'renamed' : 'modified',
  additions,
  deletions,
});

const lines = (rows: ReturnType<typeof treeRows>) =>
  rows.map((r) =>
    r.kind === 'folder'
      ? `${'  '.repeat(r.depth)}${r.folder.name}/ ${r.folder.fileCount} +${r.folder.additions} -${r.folder.deletions}`
      : `${'  '.repeat(r.depth)}${r.file.path}`,
  );

describe('file tree', () => {
  it('natural sort puts file2 before file10', () => {
    expect(['file10.ts', 'file2.ts', 'file1.ts'].sort(naturalCompare)).toEqual(['file1.ts', 'file2.ts', 'file10.ts']);
    expect(naturalCompare('a', 'a')).toBe(0);
    // Otherwise git's order (code units): an upper-case name before a lower-case one, as the server lists them.
    expect(['src/api/auth.ts', 'src/Login.vue', 'src/file010.ts', 'src/file9.ts'].sort(naturalCompare)).toEqual([
      'src/Login.vue',
      'src/api/auth.ts',
      'src/file9.ts',
      'src/file010.ts',
    ]);
  });

  it('folders first, natural order, totals per folder, single-folder chains joined', () => {
    const tree = buildFileTree([
      row('src/app/components/b10.vue', 3, 1),
      row('src/app/components/b2.vue', 2, 2),
      row('README.md', 1, 0),
      row('test/x.test.ts', 5, 0),
    ]);
    expect(lines(treeRows(tree, new Set()))).toEqual([
      'src/app/components/ 2 +5 -3',
      '  src/app/components/b2.vue',
      '  src/app/components/b10.vue',
      'test/ 1 +5 -0',
      '  test/x.test.ts',
      'README.md',
    ]);
  });

  it('a closed folder hides its contents and keeps its totals', () => {
    const tree = buildFileTree([row('a/x.ts', 2, 1), row('a/b/y.ts', 1, 1), row('z.ts')]);
    expect(lines(treeRows(tree, new Set(['a'])))).toEqual(['a/ 2 +3 -2', 'z.ts']);
    expect(lines(treeRows(tree, new Set(['a/b'])))).toEqual(['a/ 2 +3 -2', '  b/ 1 +1 -1', '  a/x.ts', 'z.ts']);
  });

  it('a rename sits at its new path and reads compactly', () => {
    expect(compactRename('src/utils/format.ts', 'src/lib/format.ts')).toBe('src/{utils -> lib}/format.ts');
    expect(compactRename('a.ts', 'b.ts')).toBe('{a.ts -> b.ts}');
    expect(compactRename('src/a.ts', 'src/b.ts')).toBe('src/{a.ts -> b.ts}');
    expect(compactRename('old/x.ts', 'new/deep/x.ts')).toBe('{old -> new/deep}/x.ts');
    const tree = buildFileTree([row('src/lib/format.ts', 0, 0, 'src/utils/format.ts')]);
    expect(lines(treeRows(tree, new Set()))).toEqual(['src/lib/ 1 +0 -0', '  src/lib/format.ts']);
  });

  it('a renamed file under its folders reads relative to the deepest folder shown that holds both its paths', () => {
    // Within one folder: only the names.
    expect(
      treeFileLabel({ path: 'packages/vite/src/node/helpers.ts', old_path: 'packages/vite/src/node/utils.ts' }, [
        'packages/vite/src/node',
      ]),
    ).toBe('{utils.ts -> helpers.ts}');
    // Moved between folders: relative to the deepest common folder shown above it.
    expect(treeFileLabel({ path: 'src/lib/format.ts', old_path: 'src/utils/format.ts' }, ['src', 'src/lib'])).toBe(
      '{utils -> lib}/format.ts',
    );
    // No shown folder holds both: the whole compact rename; a plain file: its name.
    expect(treeFileLabel({ path: 'src/lib/format.ts', old_path: 'src/utils/format.ts' }, ['src/lib'])).toBe(
      'src/{utils -> lib}/format.ts',
    );
    expect(treeFileLabel({ path: 'src/lib/format.ts', old_path: null }, ['src/lib'])).toBe('format.ts');
    // A folder named like a prefix of another is not a common folder.
    expect(treeFileLabel({ path: 'ab/x.ts', old_path: 'a/x.ts' }, ['ab'])).toBe('{a -> ab}/x.ts');
    // Through treeRows: a rename next to another file in a joined folder.
    const tree = buildFileTree([
      row('packages/vite/src/node/helpers.ts', 1, 1, 'packages/vite/src/node/utils.ts'),
      row('packages/vite/src/node/server.ts'),
    ]);
    expect(treeRows(tree, new Set()).map((r) => (r.kind === 'file' ? r.label : r.folder.name))).toEqual([
      'packages/vite/src/node',
      '{utils.ts -> helpers.ts}',
      'server.ts',
    ]);
  });

  it('builds a tree of 10,000 rows with every file once', () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => row(`d${i % 37}/sub${i % 5}/f${i}.txt`));
    const tree = buildFileTree(rows);
    expect(tree.fileCount).toBe(10_000);
    expect(treeRows(tree, new Set()).filter((r) => r.kind === 'file')).toHaveLength(10_000);
  });
});
