import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempDir } from '../test-support/temp-repo.ts';

/**
 * A database written by an earlier release opens in place with this code: every session, message,
 * run, tool call, change, file and patch reads back byte for byte as that release served it, and a
 * repeated start or completion still answers what the release answered the first time (the stored
 * answers survive). The fixture and the answers it gave were recorded with that release; see
 * fixtures/README.md.
 */

interface Fixture {
  clock: number;
  events: { event: { type: string }; status: number; answer: unknown }[];
  reads: { path: string; status: number; body: unknown }[];
}

const FIXTURES = new URL('./fixtures/', import.meta.url);
const fixture = JSON.parse(fs.readFileSync(new URL('release-1.json', FIXTURES), 'utf8')) as Fixture;
/** Events whose repeat replays the stored answer and changes nothing. */
const REPLAYED = new Set(['run.started', 'tool.started', 'tool.completed', 'run.completed', 'run.failed']);

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A copy of the release's database file, as a user's would be found on upgrade. */
function copyOfReleaseDb(): string {
  const dir = createTempDir('rundiff-upgrade-');
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'rundiff.db');
  fs.copyFileSync(new URL('release-1.db', FIXTURES), file);
  return file;
}

async function open(dbPath: string): Promise<TestServer> {
  // The clock continues where the release left off, so the age sweep at start removes nothing.
  let clock = fixture.clock;
  const t = await startTestServer({ dbPath, now: () => (clock += 1_000) });
  cleanups.push(() => t.close());
  return t;
}

/**
 * Session summary fields this release changed on purpose: four were added (failed and running run
 * counts, the latest run's status, the runs' token usage) and `changed_count` now counts distinct paths. They are compared
 * by `sessionSummaries` below; every other byte of every answer must still be the release's.
 */
const SESSION_FIELDS_CHANGED = ['changed_count', 'failed_run_count', 'running_run_count', 'last_run_status', 'usage'];
const isSessionRead = (p: string) => /^\/api\/hermes\/sessions(\/[^/]+)?$/.test(p);

/**
 * Change summary fields this release added: the line totals over every stored row. The release
 * kept none, so they are summed from its rows when read (compared by their own test below).
 */
const CHANGE_FIELDS_ADDED = ['total_additions', 'total_deletions'];

/**
 * Run fields this release added: a run's own title and its token usage. The release kept neither,
 * so every run reads them as null (compared by their own test below).
 */
const RUN_FIELDS_ADDED = ['title', 'usage'];

/** Every change summary in an answer: objects with a `change_id` and their `files`. */
function changeSummaries(body: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(body)) for (const v of body) changeSummaries(v, out);
  else if (body !== null && typeof body === 'object') {
    const o = body as Record<string, unknown>;
    if (typeof o.change_id === 'string' && Array.isArray(o.files)) out.push(o);
    for (const v of Object.values(o)) changeSummaries(v, out);
  }
  return out;
}

/** The answer's text with the changed session fields (list and detail reads) and the added change and run fields left out. */
function withoutChangedSessionFields(p: string, text: string): string {
  if (!text.startsWith('{')) return text;
  const body = JSON.parse(text) as {
    sessions?: Record<string, unknown>[];
    session?: Record<string, unknown>;
    runs?: Record<string, unknown>[];
  };
  if (isSessionRead(p)) {
    for (const s of [...(body.sessions ?? []), ...(body.session ? [body.session] : [])])
      for (const f of SESSION_FIELDS_CHANGED) delete s[f];
    for (const r of body.runs ?? []) for (const f of RUN_FIELDS_ADDED) delete r[f];
  }
  for (const c of changeSummaries(body)) for (const f of CHANGE_FIELDS_ADDED) delete c[f];
  return JSON.stringify(body);
}

/** Every recorded read whose answer differs now, as the exact text served then and now. */
async function differences(t: TestServer): Promise<{ path: string; then: string; now: string }[]> {
  const out: { path: string; then: string; now: string }[] = [];
  for (const r of fixture.reads) {
    const res = await t.get(r.path);
    const then = `${r.status} ${withoutChangedSessionFields(r.path, typeof r.body === 'string' ? r.body : JSON.stringify(r.body))}`;
    const now = `${res.status} ${withoutChangedSessionFields(r.path, res.text)}`;
    if (now !== then) out.push({ path: r.path, then, now });
  }
  return out;
}

describe('a database made by the previous release', () => {
  it('the fixture covers runs, tool calls (one sharing a run id), untracked and failed ones, renames, binaries and raw-byte names', () => {
    const db = new Database(fileURLToPath(new URL('release-1.db', FIXTURES)), { readonly: true });
    cleanups.push(() => db.close());
    const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
    expect(versions).toEqual([1, 2]);
    const text = JSON.stringify(fixture.reads);
    for (const needle of ['"run_id":"same"', '"tool_call_id":"same"', '"status":"failed"', '"tracking":false'])
      expect(text).toContain(needle);
    for (const needle of ['"change_type":"renamed"', '"omitted_reason":"binary"', '"path_base64"'])
      expect(text).toContain(needle);
    expect(fixture.reads.length).toBeGreaterThan(20);
  });

  it('upgrades in place: every REST answer of the history reads back byte for byte as the release served it', async () => {
    const t = await open(copyOfReleaseDb());
    expect(await differences(t)).toEqual([]);
  });

  it('upgrades in place: session totals count distinct paths and summaries gain run status counts', async () => {
    const t = await open(copyOfReleaseDb());
    const then = fixture.reads.find((r) => r.path === '/api/hermes/sessions')!.body as {
      sessions: Record<string, unknown>[];
    };
    const now = (await t.get('/api/hermes/sessions')).body.sessions as Record<string, unknown>[];
    const pick = (list: Record<string, unknown>[]) =>
      Object.fromEntries(list.map((s) => [s.id, SESSION_FIELDS_CHANGED.map((f) => s[f])]));
    // s-git: added.txt was changed by two runs (the release counted it twice, 6).
    expect(pick(then.sessions)).toEqual({
      's-untracked': [0, undefined, undefined, undefined, undefined],
      's-plain': [2, undefined, undefined, undefined, undefined],
      's-git': [6, undefined, undefined, undefined, undefined],
    });
    // No run of the release has usage: no session has any.
    expect(pick(now)).toEqual({
      's-untracked': [0, 0, 0, 'completed', null],
      's-plain': [2, 0, 0, 'completed', null],
      's-git': [5, 1, 1, 'running', null],
    });
  });

  it('upgrades in place: a change the release stored gains its line totals, summed from its rows', async () => {
    const t = await open(copyOfReleaseDb());
    let seen = 0;
    for (const r of fixture.reads.filter((x) => /\/workspace-run-changes\/[^/]+$/.test(x.path) && x.status === 200)) {
      const then = (r.body as { change: { files: { additions: number; deletions: number }[] } }).change;
      const now = (await t.get(r.path)).body.change as Record<string, unknown>;
      expect(now.files_total, 'the fixture changes are not paged: their files are every row').toBeUndefined();
      expect([now.total_additions, now.total_deletions]).toEqual([
        then.files.reduce((n, f) => n + f.additions, 0),
        then.files.reduce((n, f) => n + f.deletions, 0),
      ]);
      seen++;
    }
    expect(seen).toBeGreaterThan(2);
  });

  it('upgrades in place: a run the release stored reads with no title of its own and no usage, its session none', async () => {
    const t = await open(copyOfReleaseDb());
    let seen = 0;
    for (const r of fixture.reads.filter((x) => /^\/api\/hermes\/sessions\/[^/]+$/.test(x.path) && x.status === 200)) {
      const then = (r.body as { runs: Record<string, unknown>[] }).runs;
      const now = (await t.get(r.path)).body.runs as Record<string, unknown>[];
      expect(then.every((run) => !('title' in run))).toBe(true);
      expect(now.map((run) => [run.run_id, run.title, run.usage])).toEqual(then.map((run) => [run.run_id, null, null]));
      expect((await t.get(r.path)).body.session.usage).toBeNull();
      seen += now.length;
    }
    expect(seen).toBeGreaterThan(2);
  });

  it('upgrades in place: repeated starts and completions answer as the release answered, and change nothing', async () => {
    const t = await open(copyOfReleaseDb());
    const replayed = fixture.events.filter((e) => REPLAYED.has(e.event.type));
    expect(replayed.length).toBeGreaterThan(10);
    for (const e of replayed) {
      const res = await t.post(e.event);
      expect({ event: e.event, status: res.status, text: res.text }).toEqual({
        event: e.event,
        status: e.status,
        text: JSON.stringify(e.answer),
      });
    }
    expect(await differences(t)).toEqual([]);
  });

  it('upgrades in place: the upgraded file reopens, and the release left an open run that still closes', async () => {
    const dbPath = copyOfReleaseDb();
    const first = await open(dbPath);
    await first.server.close();
    const t = await open(dbPath);
    expect(await differences(t)).toEqual([]);
    // Its checkpoint lived in the old process only: the completion is recorded, untracked.
    const done = await t.post({ type: 'run.completed', session_id: 's-git', run_id: 'r-open' });
    expect(done.body).toEqual({ change_id: 'run:r-open', tracking: false, reason: 'no_checkpoint' });
    const detail = await t.get('/api/hermes/sessions/s-git');
    expect(detail.body.runs.find((r: { run_id: string }) => r.run_id === 'r-open')).toMatchObject({
      status: 'completed',
      tracking: false,
      reason: 'no_checkpoint',
    });
  });

  it('upgrades in place: what the release stored becomes searchable (titles, messages, commands, paths, patches)', async () => {
    const t = await open(copyOfReleaseDb());
    const kinds = async (q: string) =>
      ((await t.get(`/api/hermes/search?q=${encodeURIComponent(q)}`)).body as { hits: { kind: string }[] }).hits.map(
        (h) => h.kind,
      );
    expect(await kinds('Git session')).toEqual(['title']);
    expect(await kinds('edit please')).toEqual(['prompt']);
    expect(await kinds('done, edited')).toEqual(['reply']);
    expect(await kinds('edit_file')).toEqual(['command']);
    expect(await kinds('added.txt kind:path')).toContain('path');
    const [gone] = (await t.get('/api/hermes/search?q=gone%20kind:patch')).body.hits as {
      line: number;
      side: string;
    }[];
    expect(gone).toMatchObject({ line: 1, side: 'before' });
  });

  it('control: a row changed in the copy shows up as a difference', async () => {
    const dbPath = copyOfReleaseDb();
    const db = new Database(dbPath);
    db.prepare("UPDATE tool_calls SET name = 'other' WHERE tool_call_id = 'same'").run();
    db.close();
    const t = await open(dbPath);
    expect((await differences(t)).map((d) => d.path)).toEqual(['/api/hermes/sessions/s-git']);
  });
});
