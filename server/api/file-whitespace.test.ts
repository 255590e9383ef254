import { afterEach, describe, expect, it } from 'vitest';
import type { Limits } from '../../shared/index.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo } from '../test-support/index.ts';

/** `?whitespace=ignore` on one file's patch: computed again from the stored sides, or said why not. */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const CODE = 'function f(a) {\n  if (a) {\n    return 1;\n  }\n  return 2;\n}\n';
// Re-indented with tabs and one real change (2 -> 3).
const REINDENTED = 'function f(a) {\n\tif (a) {\n\t\treturn 1;\n\t}\n\treturn 3;\n}\n';

async function changed(
  edits: Record<string, string | Buffer>,
  limits: Partial<Limits> = {},
): Promise<{ t: TestServer; get: (path: string, query?: string) => ReturnType<TestServer['get']> }> {
  const t = await startTestServer({ limits });
  cleanups.push(() => t.close());
  const repo = createTempRepo({
    files: { 'f.js': CODE, 'same.js': CODE, 'latin.txt': Buffer.from('caf\xe9\n', 'latin1') },
  });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
  for (const [p, c] of Object.entries(edits)) repo.write(p, c);
  await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
  const base = '/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1/files';
  const files = (await t.get(base)).body.files as { id: string; path: string }[];
  const ids = new Map(files.map((f) => [f.path, f.id]));
  return { t, get: (p, query = '') => t.get(`${base}/${ids.get(p)}${query}`) };
}

describe('GET .../files/:fileId?whitespace=ignore', () => {
  it('answers the patch without whitespace-only changes; without the parameter the stored patch, as before', async () => {
    const { get } = await changed({ 'f.js': REINDENTED });
    const plain = await get('f.js');
    expect(Object.keys(plain.body)).toEqual(['file']);
    expect(plain.body.file.patch).toContain('-  if (a) {');

    const ignored = await get('f.js', '?whitespace=ignore');
    expect(ignored.status).toBe(200);
    expect(ignored.body.whitespace_ignored).toBe(true);
    expect(ignored.body.whitespace_reason).toBeNull();
    const header = plain.body.file.patch.slice(0, plain.body.file.patch.indexOf('@@'));
    expect(ignored.body.file.patch).toBe(
      `${header}@@ -2,5 +2,5 @@ function f(a) {\n \tif (a) {\n \t\treturn 1;\n \t}\n-  return 2;\n+\treturn 3;\n }\n`,
    );
    // The row's own fields stay those of the stored change, patch_bytes too (the stored patch's size).
    expect(ignored.body.file).toMatchObject({ id: plain.body.file.id, path: 'f.js', additions: 4, deletions: 4 });
    expect(plain.body.file.patch_bytes).toBe(Buffer.byteLength(plain.body.file.patch));
    expect(Buffer.byteLength(ignored.body.file.patch)).toBeLessThan(plain.body.file.patch_bytes);
    const { patch: _p, truncated: _t, ...storedFields } = plain.body.file;
    const { patch: _q, truncated: _u, ...ignoredFields } = ignored.body.file;
    expect(ignoredFields).toEqual(storedFields);
  });

  it('a file whose change is whitespace only keeps its header lines and no hunk', async () => {
    const { get } = await changed({ 'same.js': CODE.replace(/ {2}/g, '\t') });
    const res = await get('same.js', '?whitespace=ignore');
    expect(res.body.whitespace_ignored).toBe(true);
    expect(res.body.file.patch).toMatch(
      /^diff --git a\/same.js b\/same.js\nindex [0-9a-f]+\.\.[0-9a-f]+ 100644\n--- a\/same.js\n\+\+\+ b\/same.js\n$/,
    );
  });

  it('an added file is all additions, its whitespace kept as written', async () => {
    const { get } = await changed({ 'new.js': '  x\n' });
    const res = await get('new.js', '?whitespace=ignore');
    expect(res.body.whitespace_ignored).toBe(true);
    expect(res.body.file.patch).toMatch(/@@ -0,0 \+1 @@\n\+ {2}x\n$/);
  });

  it('sides the content store did not keep: the stored patch, whitespace_ignored false, not_stored', async () => {
    const { get } = await changed({ 'f.js': REINDENTED }, { maxContentFileBytes: 8 });
    const plain = await get('f.js');
    const res = await get('f.js', '?whitespace=ignore');
    expect(res.body).toEqual({ file: plain.body.file, whitespace_ignored: false, whitespace_reason: 'not_stored' });
  });

  it('text that is not UTF-8 is not_utf8; a row with no stored patch is no_patch', async () => {
    const { get } = await changed({
      'latin.txt': Buffer.from('caf\xe9 au lait\n', 'latin1'),
      'blob.bin': Buffer.from([0, 1, 2, 0]),
    });
    expect((await get('latin.txt', '?whitespace=ignore')).body).toMatchObject({
      whitespace_ignored: false,
      whitespace_reason: 'not_utf8',
    });
    const bin = await get('blob.bin', '?whitespace=ignore');
    expect(bin.body).toMatchObject({ whitespace_ignored: false, whitespace_reason: 'no_patch' });
    expect(bin.body.file.patch).toBeNull();
  });

  it('the per-file patch bound applies to the computed patch, which then says truncated', async () => {
    const big = Array.from({ length: 200 }, (_, i) => `line ${i}\n`).join('');
    const { get } = await changed({ 'f.js': big }, { maxFilePatchBytes: 300 });
    const res = await get('f.js', '?whitespace=ignore');
    expect(res.body.whitespace_ignored).toBe(true);
    expect(res.body.file.truncated).toBe(true);
    expect(Buffer.byteLength(res.body.file.patch)).toBeLessThanOrEqual(300);
  });

  it('any other whitespace value is a 400 naming the field', async () => {
    const { get } = await changed({ 'f.js': REINDENTED });
    const res = await get('f.js', '?whitespace=all');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_input', details: { field: 'whitespace' } });
  });
});
