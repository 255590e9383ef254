import { afterEach, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo } from '../test-support/index.ts';

/** The stored content of a changed file, one side at a time, for the review views. */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

// A PNG signature and the start of its header chunk (whose length field holds NUL bytes).
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]),
  Buffer.alloc(16, 7),
]);

async function changed(): Promise<{ t: TestServer; ids: Record<string, string>; base: string }> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'a.txt': 'one\ntwo\n', 'gone.txt': 'bye\n', 'logo.bin': PNG }, git: false });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
  repo.write('a.txt', 'one\nTWO <script>alert(1)</script>\n');
  repo.rm('gone.txt');
  repo.write('new.txt', 'fresh\n');
  repo.write('logo.bin', Buffer.concat([PNG, Buffer.from([1])]));
  await t.post({ type: 'run.completed', session_id: 's1', run_id: 'r1' });
  const files = (await t.get('/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1/files')).body.files as {
    id: string;
    path: string;
  }[];
  return {
    t,
    ids: Object.fromEntries(files.map((f) => [f.path, f.id])),
    base: '/api/hermes/sessions/s1/workspace-run-changes/run%3Ar1/files',
  };
}

it("answers each side's whole text as the change recorded it, and which side is absent for an added or deleted file", async () => {
  const { t, ids, base } = await changed();
  const side = async (path: string, s: string) => (await t.get(`${base}/${ids[path]}/content?side=${s}`)).body.content;
  expect(await side('a.txt', 'before')).toMatchObject({
    side: 'before',
    text: 'one\ntwo\n',
    omitted_reason: null,
    size: 8,
  });
  expect((await side('a.txt', 'after')).text).toBe('one\nTWO <script>alert(1)</script>\n');
  expect(await side('new.txt', 'before')).toMatchObject({ text: null, omitted_reason: 'absent' });
  expect(await side('new.txt', 'after')).toMatchObject({ text: 'fresh\n' });
  expect(await side('gone.txt', 'after')).toMatchObject({ text: null, omitted_reason: 'absent' });
  expect(await side('logo.bin', 'after')).toMatchObject({ text: null, omitted_reason: 'binary', size: PNG.length + 1 });
});

it('serves the raw bytes with an image type only for image magic bytes, never as a page', async () => {
  const { t, ids, base } = await changed();
  const png = await t.get(`${base}/${ids['logo.bin']}/content?side=before&encoding=raw`);
  expect(png.status).toBe(200);
  expect(png.headers['content-type']).toBe('image/png');
  expect(png.raw.equals(PNG)).toBe(true);
  const text = await t.get(`${base}/${ids['a.txt']}/content?side=after&encoding=raw`);
  expect(text.headers['content-type']).toBe('application/octet-stream');
  expect(text.headers['x-content-type-options']).toBe('nosniff');
  expect(text.headers['content-disposition']).toBe('attachment');
  const absent = await t.get(`${base}/${ids['new.txt']}/content?side=before&encoding=raw`);
  expect(absent.status).toBe(404);
  expect(absent.body.error.details.omitted_reason).toBe('absent');
});

it('refuses a side or encoding it does not know (400) and an unknown file (404)', async () => {
  const { t, ids, base } = await changed();
  expect((await t.get(`${base}/${ids['a.txt']}/content`)).status).toBe(400);
  expect((await t.get(`${base}/${ids['a.txt']}/content?side=middle`)).status).toBe(400);
  expect((await t.get(`${base}/${ids['a.txt']}/content?side=after&encoding=html`)).status).toBe(400);
  expect((await t.get(`${base}/no-such-file/content?side=after`)).status).toBe(404);
});
