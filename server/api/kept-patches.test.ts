import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Limits } from '../../shared/index.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';

/**
 * A run over the change's patch budget and the per-file bound, as a formatter run over many files
 * is: the stored rows keep only the smallest patches inline, but every file opens on its whole
 * patch (computed from the kept contents) and the whole-run patch takes the start tree to the end
 * tree under the real `git apply`, binary files included.
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(limits: Partial<Limits>): Promise<TestServer> {
  const t = await startTestServer({ limits });
  cleanups.push(() => t.close());
  return t;
}

function repo(files: Record<string, string | Buffer>): TempRepo {
  const r = createTempRepo({ files });
  cleanups.push(() => r.cleanup());
  return r;
}

const lines = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix} line ${i}\n`).join('');
/** Every line rewritten: what a formatter does to a file. */
const rewritten = (text: string) => text.replace(/line/g, 'LINE');
const bin = (n: number) => Buffer.concat([Buffer.from([0, 0xff]), randomBytes(n)]);

/** The tree's files (not .git) with their bytes. */
function tree(dir: string): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (p === '.git') continue;
      if (e.isDirectory()) walk(p);
      else out[p] = fs.readFileSync(path.join(dir, p));
    }
  };
  walk('');
  return out;
}

/** Counts the `+`/`-` lines of a patch's hunks. */
function counted(patch: string): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  let inHunk = false;
  for (const line of patch.split('\n')) {
    if (line.startsWith('@@')) inHunk = true;
    else if (line.startsWith('diff --git')) inHunk = false;
    else if (inHunk && line.startsWith('+')) additions++;
    else if (inHunk && line.startsWith('-')) deletions++;
  }
  return { additions, deletions };
}

async function recordRun(t: TestServer, r: TempRepo, change: () => void): Promise<Record<string, Buffer>> {
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: r.dir });
  expect((await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' })).status).toBe(200);
  const start = tree(r.dir);
  change();
  expect((await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' })).status).toBe(200);
  return start;
}

const FILES = '/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1/files';

describe('every file of a budgeted run opens on its whole patch', () => {
  it("serves rows left out for the budget and rows cut at the per-file bound whole, with the rows' counts", async () => {
    // A generous diff time, so hiding whitespace on a 2,000-line rewrite finishes on a loaded machine.
    const t = await server({ maxRunPatchBytes: 5 * 1024, maxFilePatchBytes: 2 * 1024, diffTimeoutMs: 10_000 });
    const start: Record<string, string> = {
      'small.txt': 'a\nb\n',
      'big.txt': lines('big', 400),
      'huge.txt': lines('huge', 600),
      'mid.txt': lines('mid', 120),
    };
    const r = repo(start);
    await recordRun(t, r, () => {
      r.write('small.txt', 'a\nB\n');
      r.write('big.txt', rewritten(start['big.txt']!));
      r.write('huge.txt', rewritten(start['huge.txt']!));
      r.write('mid.txt', rewritten(start['mid.txt']!));
    });
    const page = (await t.get(FILES)).body as {
      files: {
        id: string;
        path: string;
        omitted_reason: string | null;
        truncated: boolean;
        additions: number;
        deletions: number;
      }[];
    };
    const byPath = new Map(page.files.map((f) => [f.path, f]));
    // The stored rows (positive control): the smallest patch whole, the next ones cut at the
    // per-file bound while the budget lasts, the last left out for the budget.
    expect(byPath.get('small.txt')).toMatchObject({ omitted_reason: null, truncated: false });
    expect(page.files.filter((f) => f.truncated && f.omitted_reason === null).length).toBeGreaterThan(0);
    expect(page.files.filter((f) => f.omitted_reason === 'budget').length).toBeGreaterThan(0);

    for (const row of page.files) {
      const res = await t.get(`${FILES}/${row.id}`);
      expect(res.status).toBe(200);
      const file = res.body.file as {
        patch: string;
        truncated: boolean;
        omitted_reason: string | null;
        additions: number;
      };
      expect(file.patch, row.path).not.toBeNull();
      expect(file.truncated, row.path).toBe(false);
      expect(file.omitted_reason).toBeNull();
      expect(counted(file.patch), row.path).toEqual({ additions: row.additions, deletions: row.deletions });
      expect(res.body.patch_from_contents === true, row.path).toBe(row.omitted_reason !== null || row.truncated);
      // The same file shown with whitespace hidden starts from the whole patch too.
      const ws = await t.get(`${FILES}/${row.id}?whitespace=ignore`);
      expect([ws.body.whitespace_ignored, ws.body.whitespace_reason], row.path).toEqual([true, null]);
    }
  });

  it('cuts a patch computed on request at RUNDIFF_MAX_OPENED_PATCH_BYTES and says so', async () => {
    const t = await server({ maxRunPatchBytes: 1024, maxOpenedPatchBytes: 8 * 1024 });
    const text = lines('wide', 1_000);
    const r = repo({ 'a.txt': text });
    await recordRun(t, r, () => r.write('a.txt', rewritten(text)));
    const row = (await t.get(FILES)).body.files[0];
    expect(row.omitted_reason).toBe('budget');
    const res = await t.get(`${FILES}/${row.id}`);
    expect(res.body.patch_from_contents).toBe(true);
    expect(res.body.file.truncated).toBe(true);
    expect(Buffer.byteLength(res.body.file.patch)).toBeLessThanOrEqual(8 * 1024);
    expect(res.body.file.patch.endsWith('\n')).toBe(true);
  });

  it('says why when the contents were not kept: the row as stored', async () => {
    const t = await server({ maxRunPatchBytes: 1024, maxContentFileBytes: 1024 });
    const text = lines('kept', 300);
    const r = repo({ 'a.txt': text });
    await recordRun(t, r, () => r.write('a.txt', rewritten(text)));
    const row = (await t.get(FILES)).body.files[0];
    const res = await t.get(`${FILES}/${row.id}`);
    expect(res.body.patch_from_contents).toBeUndefined();
    expect(res.body.file).toMatchObject({ patch: null, omitted_reason: 'budget' });
  });
});

describe('the whole-run patch reproduces the end tree', () => {
  it('includes every kept file whole, binary files as git binary patches, so git apply gives the end tree', async () => {
    const t = await server({ maxRunPatchBytes: 2 * 1024, maxFilePatchBytes: 8 * 1024 });
    const start: Record<string, string | Buffer> = {
      'src/a.txt': lines('a', 300),
      'src/b.txt': lines('b', 40),
      'src/c.txt': 'tiny\n',
      'img.bin': bin(3_000),
      'old.bin': bin(500),
      'move/from.txt': lines('moved', 200),
    };
    const r = repo(start);
    const startTree = await recordRun(t, r, () => {
      r.write('src/a.txt', rewritten(start['src/a.txt'] as string));
      r.write('src/b.txt', rewritten(start['src/b.txt'] as string));
      r.write('src/c.txt', 'tiny!\n');
      r.write('img.bin', Buffer.concat([start['img.bin'] as Buffer, bin(100)]));
      r.rm('old.bin');
      r.write('new.bin', bin(2_000));
      r.rm('move/from.txt');
      r.write('move/to.txt', (start['move/from.txt'] as string) + 'one more\n');
      r.write('added.txt', lines('added', 500));
    });
    const endTree = tree(r.dir);
    const res = await t.get('/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1/patch');
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('# rundiff:');
    expect(res.text).toContain('GIT binary patch');

    const fresh = repo({});
    for (const [p, bytes] of Object.entries(startTree)) fresh.write(p, bytes);
    fs.writeFileSync(path.join(fresh.dir, '..', `${path.basename(fresh.dir)}.patch`), res.raw);
    const patchFile = path.join(fresh.dir, '..', `${path.basename(fresh.dir)}.patch`);
    cleanups.push(() => fs.rmSync(patchFile, { force: true }));
    fresh.git('apply', '--whitespace=nowarn', patchFile);
    expect(tree(fresh.dir)).toEqual(endTree);
  });

  it('the net change patch of the session includes every file whole too', async () => {
    const t = await server({ maxRunPatchBytes: 1024 });
    const start = { 'a.txt': lines('a', 200), 'b.bin': bin(800) };
    const r = repo(start);
    const startTree = await recordRun(t, r, () => {
      r.write('a.txt', rewritten(start['a.txt']));
      r.write('b.bin', bin(900));
    });
    const endTree = tree(r.dir);
    const net = await t.get('/api/hermes/sessions/s1/net-change');
    const a = net.body.change.files.find((f: { path: string }) => f.path === 'a.txt');
    expect(a.omitted_reason).toBe('budget');
    const opened = await t.get(`/api/hermes/sessions/s1/net-change/files/${a.id}`);
    expect(opened.body.patch_from_contents).toBe(true);
    expect(counted(opened.body.file.patch)).toEqual({ additions: a.additions, deletions: a.deletions });

    const res = await t.get('/api/hermes/sessions/s1/net-change/patch');
    expect(res.text).not.toContain('# rundiff:');
    const fresh = repo({});
    for (const [p, bytes] of Object.entries(startTree)) fresh.write(p, bytes);
    const patchFile = `${fresh.dir}.patch`;
    fs.writeFileSync(patchFile, res.raw);
    cleanups.push(() => fs.rmSync(patchFile, { force: true }));
    fresh.git('apply', '--whitespace=nowarn', patchFile);
    expect(tree(fresh.dir)).toEqual(endTree);
  });
});
