import { afterEach, describe, expect, it } from 'vitest';
import { WORKSPACES_MAX } from '../../shared/index.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<TestServer> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  return t;
}

describe('GET /api/hermes/workspaces', () => {
  it('lists each workspace of the stored sessions once, in path order, with its session count', async () => {
    const t = await setup();
    expect((await t.get('/api/hermes/workspaces')).body).toEqual({ workspaces: [], truncated: false });
    const upsert = (id: string, workspace?: string) =>
      t.server.store.sessions.upsert(id, workspace === undefined ? {} : { workspace }, 1);
    await upsert('s1', '/w/b');
    await upsert('s2', '/w/a');
    await upsert('s3', '/w/b');
    await upsert('s4');
    const res = await t.get('/api/hermes/workspaces');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      workspaces: [
        { workspace: '/w/a', session_count: 1 },
        { workspace: '/w/b', session_count: 2 },
      ],
      truncated: false,
    });
    // Deleting a session takes its count with it.
    await t.server.store.sessions.delete('s2');
    expect((await t.get('/api/hermes/workspaces')).body.workspaces).toEqual([{ workspace: '/w/b', session_count: 2 }]);
  });

  it(`past ${WORKSPACES_MAX} workspaces the least used are left out and the answer says so`, async () => {
    const t = await setup();
    await t.server.store.transaction(async (tx) => {
      for (let i = 0; i < WORKSPACES_MAX; i++) await tx.sessions.upsert(`s${i}`, { workspace: `/w/${i}` }, 1);
    });
    let body = (await t.get('/api/hermes/workspaces')).body;
    expect(body.workspaces).toHaveLength(WORKSPACES_MAX);
    expect(body.truncated).toBe(false);

    // One more workspace, and one workspace used twice: the left-out one is among the least used.
    await t.server.store.sessions.upsert('extra', { workspace: '/w/extra' }, 1);
    await t.server.store.sessions.upsert('twice', { workspace: '/w/7' }, 1);
    body = (await t.get('/api/hermes/workspaces')).body;
    expect(body.workspaces).toHaveLength(WORKSPACES_MAX);
    expect(body.truncated).toBe(true);
    expect(body.workspaces).toContainEqual({ workspace: '/w/7', session_count: 2 });
  });
});
