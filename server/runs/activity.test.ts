import { afterEach, describe, expect, it } from 'vitest';
import { connectClient, startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo } from '../test-support/temp-repo.ts';

/** Runs and tool calls take one code path; their kind keeps them apart, also when they share an id. */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<TestServer> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  return t;
}

describe('a run and a tool call with the same id in one session', () => {
  it('stay two records, two checkpoints, two changes and two event streams', async () => {
    const t = await setup();
    const repo = createTempRepo({ files: { 'a.txt': 'a\n', 'b.txt': 'b\n' } });
    cleanups.push(() => repo.cleanup());
    const c = await connectClient(t.server.url);
    cleanups.push(() => c.close());
    expect(await c.ask('session.subscribe', { session_id: 's' })).toEqual({ ok: true });

    await t.post({ type: 'session.upsert', session_id: 's', workspace: repo.dir });
    const runStart = await t.post({ type: 'run.started', session_id: 's', run_id: 'x', source: 'workflow' });
    const toolStart = await t.post({
      type: 'tool.started',
      session_id: 's',
      run_id: 'x',
      tool_call_id: 'x',
      name: 'edit',
    });
    expect([runStart.body.change_id, runStart.body.tracking]).toEqual(['run:x', true]);
    expect([toolStart.body.change_id, toolStart.body.tracking]).toEqual(['tool:x', true]);

    repo.write('a.txt', 'a\ntool\n');
    const toolDone = await t.post({ type: 'tool.completed', session_id: 's', run_id: 'x', tool_call_id: 'x' });
    repo.write('b.txt', 'b\nrun\n');
    const runDone = await t.post({ type: 'run.failed', session_id: 's', run_id: 'x', error: 'stopped' });
    expect(toolDone.body.files.map((f: { path: string }) => f.path)).toEqual(['a.txt']);
    expect(runDone.body.files.map((f: { path: string }) => f.path)).toEqual(['a.txt', 'b.txt']);

    // Each repeat answers its own first answer, not the other's.
    expect((await t.post({ type: 'tool.completed', session_id: 's', run_id: 'x', tool_call_id: 'x' })).text).toBe(
      toolDone.text,
    );
    expect((await t.post({ type: 'run.completed', session_id: 's', run_id: 'x' })).text).toBe(runDone.text);
    expect((await t.post({ type: 'run.started', session_id: 's', run_id: 'x' })).text).toBe(runStart.text);

    const detail = (await t.get('/api/hermes/sessions/s')).body;
    expect(detail.session.run_count).toBe(1);
    expect(detail.runs).toEqual([
      expect.objectContaining({
        run_id: 'x',
        change_id: 'run:x',
        source: 'workflow',
        status: 'failed',
        error: 'stopped',
      }),
    ]);
    expect(detail.tool_calls).toEqual([
      expect.objectContaining({
        tool_call_id: 'x',
        run_id: 'x',
        change_id: 'tool:x',
        name: 'edit',
        status: 'completed',
        error: null,
      }),
    ]);
    expect(detail.changes.map((ch: { change_id: string; source: string }) => [ch.change_id, ch.source])).toEqual([
      ['tool:x', 'tool'],
      ['run:x', 'workflow'],
    ]);

    await c.waitFor('run.failed');
    // The live feed's progress events depend on the watcher's timing; the order of the others does not.
    expect(
      c.events
        .filter((e) => e.event !== 'session.updated' && e.event !== 'workspace.diff.progress')
        .map((e) => {
          const p = e.payload as { run?: { change_id: string }; tool_call?: { change_id: string }; change_id?: string };
          return `${e.event} ${p.run?.change_id ?? p.tool_call?.change_id ?? p.change_id}`;
        }),
    ).toEqual([
      'run.started run:x',
      'tool.started tool:x',
      'workspace.diff.completed tool:x',
      'tool.completed tool:x',
      'workspace.diff.completed run:x',
      'run.failed run:x',
    ]);
  });

  it('a completion without a start records each kind once, and deleting the session drops both open checkpoints', async () => {
    const t = await setup();
    const repo = createTempRepo({ files: { 'a.txt': 'a\n' } });
    cleanups.push(() => repo.cleanup());
    await t.post({ type: 'tool.completed', session_id: 's', run_id: 'y', tool_call_id: 'y' });
    await t.post({ type: 'run.completed', session_id: 's', run_id: 'y' });
    const detail = (await t.get('/api/hermes/sessions/s')).body;
    expect(detail.runs.map((r: { change_id: string; reason: string }) => [r.change_id, r.reason])).toEqual([
      ['run:y', 'no_checkpoint'],
    ]);
    expect(detail.tool_calls.map((r: { change_id: string; reason: string }) => [r.change_id, r.reason])).toEqual([
      ['tool:y', 'no_checkpoint'],
    ]);

    await t.post({ type: 'run.started', session_id: 'o', run_id: 'z', workspace: repo.dir });
    await t.post({ type: 'tool.started', session_id: 'o', run_id: 'z', tool_call_id: 'z' });
    expect(t.server.engine.has('o', 'run:z') && t.server.engine.has('o', 'tool:z')).toBe(true);
    expect((await t.request('DELETE', '/api/hermes/sessions/o')).status).toBe(204);
    expect([t.server.engine.has('o', 'run:z'), t.server.engine.has('o', 'tool:z')]).toEqual([false, false]);
  });
});
