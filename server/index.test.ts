import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, createRundiff, type Rundiff } from './index.ts';
import { createTempDir, createTempRepo } from './test-support/temp-repo.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function open(): { rundiff: Rundiff; db: string } {
  const dir = createTempDir();
  const db = path.join(dir, 'data', 'r.db');
  const rundiff = createRundiff({ db, env: { HOME: process.env.HOME ?? '/nonexistent' } });
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => rundiff.close());
  return { rundiff, db };
}

describe('in-process API (createRundiff)', () => {
  it('records a run straight into the database with the HTTP bridge answers', async () => {
    const { rundiff, db } = open();
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    cleanups.push(() => repo.cleanup());
    expect((await rundiff.sessionUpsert({ session_id: 's', title: 'T', workspace: repo.dir })).session).toMatchObject({
      id: 's',
      title: 'T',
    });
    await rundiff.message({ session_id: 's', role: 'user', content: 'go', run_id: 'r' });
    const start = await rundiff.runStarted({ session_id: 's', run_id: 'r' });
    expect(start).toMatchObject({ change_id: 'run:r', tracking: true, workspace_kind: 'git' });
    await rundiff.toolStarted({ session_id: 's', run_id: 'r', tool_call_id: 't' });
    repo.write('a.txt', 'b\n');
    expect(await rundiff.toolCompleted({ session_id: 's', run_id: 'r', tool_call_id: 't' })).toMatchObject({
      changed_count: 1,
    });
    const done = await rundiff.runCompleted({ session_id: 's', run_id: 'r' });
    expect(done).toMatchObject({ change_id: 'run:r', tracking: true, changed_count: 1 });
    expect(await rundiff.handle({ type: 'run.completed', session_id: 's', run_id: 'r' })).toEqual(done);
    expect(await rundiff.runFailed({ session_id: 's', run_id: 'other' })).toEqual({
      change_id: 'run:other',
      tracking: false,
      reason: 'no_checkpoint',
    });
    expect(rundiff.config.dbPath).toBe(db);
    expect((await rundiff.store.changes.listForSession('s')).map((c) => c.change_id)).toEqual(['tool:t', 'run:r']);
  });

  it('validates like the HTTP bridge: invalid_input and nothing stored', async () => {
    const { rundiff } = open();
    await expect(rundiff.runStarted({ session_id: 's', run_id: 'r', workspace: 'relative' })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    await expect(rundiff.handle({ type: 'nope', session_id: 's' })).rejects.toBeInstanceOf(AppError);
    await expect(rundiff.message({ session_id: '', role: 'user', content: '' })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    expect((await rundiff.store.sessions.page(10, null)).sessions).toEqual([]);
  });
});
