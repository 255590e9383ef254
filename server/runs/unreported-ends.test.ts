import { afterEach, describe, expect, it } from 'vitest';
import { TOOL_ENDED_WITH_RUN } from '../../shared/index.ts';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo } from '../test-support/temp-repo.ts';

/** A tool call whose end is never reported closes with its run: its change is stored, the workspace is free. */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(): Promise<{ t: TestServer; repo: ReturnType<typeof createTempRepo> }> {
  const t = await startTestServer();
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'a.txt': 'a\n', 'b.txt': 'b\n' }, git: true });
  cleanups.push(() => repo.cleanup());
  return { t, repo };
}

const revertUrl = (changeId: string) =>
  `/api/hermes/sessions/s/workspace-run-changes/${encodeURIComponent(changeId)}/revert`;
const revert = (t: TestServer, changeId: string) =>
  t.request('POST', revertUrl(changeId), { headers: { 'content-type': 'application/json' }, body: '{}' });

describe("a run's end closes its tool calls still open", () => {
  it('run.completed closes the open tool call as failed, not reported, with what changed while it was open', async () => {
    const { t, repo } = await setup();
    await t.post({ type: 'session.upsert', session_id: 's', workspace: repo.dir });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r' });
    await t.post({ type: 'tool.started', session_id: 's', run_id: 'r', tool_call_id: 'done', name: 'edit a' });
    repo.write('a.txt', 'a\nreported\n');
    await t.post({ type: 'tool.completed', session_id: 's', run_id: 'r', tool_call_id: 'done' });
    await t.post({ type: 'tool.started', session_id: 's', run_id: 'r', tool_call_id: 'lost', name: 'edit b' });
    repo.write('b.txt', 'b\nnever reported\n');
    const end = await t.post({ type: 'run.completed', session_id: 's', run_id: 'r' });
    expect(end.status).toBe(200);

    const d = (await t.get('/api/hermes/sessions/s')).body;
    expect(d.runs.map((r: { status: string }) => r.status)).toEqual(['completed']);
    expect(
      d.tool_calls.map((c: { tool_call_id: string; status: string; error: string | null; tracking: boolean }) => [
        c.tool_call_id,
        c.status,
        c.error,
        c.tracking,
      ]),
    ).toEqual([
      ['done', 'completed', null, true],
      ['lost', 'failed', TOOL_ENDED_WITH_RUN, true],
    ]);
    const files = (changeId: string) =>
      d.changes
        .find((c: { change_id: string }) => c.change_id === changeId)
        ?.files.map((f: { path: string }) => f.path);
    expect(files('tool:done')).toEqual(['a.txt']);
    expect(files('tool:lost')).toEqual(['b.txt']);
    expect(files('run:r')).toEqual(['a.txt', 'b.txt']);

    // Nothing of the run is open any more: a revert of its change is not refused as busy.
    const res = await revert(t, 'tool:lost');
    expect(res.status).toBe(200);
    expect(repo.read('b.txt').toString()).toBe('b\n');
  });

  it('while the tool call is open a revert in its workspace is busy (the control), and run.failed frees it too', async () => {
    const { t, repo } = await setup();
    await t.post({ type: 'session.upsert', session_id: 's', workspace: repo.dir });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r0' });
    repo.write('a.txt', 'a\nfirst run\n');
    await t.post({ type: 'run.completed', session_id: 's', run_id: 'r0' });
    await t.post({ type: 'run.started', session_id: 's', run_id: 'r' });
    await t.post({ type: 'tool.started', session_id: 's', run_id: 'r', tool_call_id: 'lost' });
    const busy = await revert(t, 'run:r0');
    expect([busy.status, busy.body.error.code]).toEqual([409, 'workspace_busy']);
    await t.post({ type: 'run.failed', session_id: 's', run_id: 'r', error: 'stopped' });
    const d = (await t.get('/api/hermes/sessions/s')).body;
    expect(d.tool_calls.map((c: { status: string; error: string }) => [c.status, c.error])).toEqual([
      ['failed', TOOL_ENDED_WITH_RUN],
    ]);
    expect((await revert(t, 'run:r0')).status).toBe(200);
    expect(repo.read('a.txt').toString()).toBe('a\n');
  });
});
