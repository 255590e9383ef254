import { afterEach, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../test-support/server-harness.ts';
import { createTempRepo } from '../test-support/temp-repo.ts';

/**
 * A bridge `tool.completed` over the body limit (a tool's huge answer) is refused with 413, and the
 * tool call it names is closed without its answer and its change stored, so its checkpoint no
 * longer keeps the workspace busy until the run ends (or the checkpoint's TTL).
 */

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const LIMIT = 64 * 1024;

async function setup(): Promise<{ t: TestServer; write: (s: string) => void }> {
  const t = await startTestServer({ limits: { maxBodyBytes: LIMIT } });
  cleanups.push(() => t.close());
  const repo = createTempRepo({ files: { 'a.txt': 'one\n' } });
  cleanups.push(() => repo.cleanup());
  await t.post({ type: 'session.upsert', session_id: 's1', workspace: repo.dir });
  return { t, write: (s) => repo.write('a.txt', s) };
}

const huge = 'x'.repeat(LIMIT * 2);

for (const [label, body] of [
  [
    'ids first, the answer after them',
    { type: 'tool.completed', session_id: 's1', run_id: 'r1', tool_call_id: 't1', output: huge },
  ],
  [
    'the answer first, the ids after it',
    { output: huge, type: 'tool.completed', session_id: 's1', run_id: 'r1', tool_call_id: 't1' },
  ],
] as const) {
  it(`an over-limit tool.completed (${label}) is refused and still closes its tool call`, async () => {
    const { t, write } = await setup();
    await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
    await t.post({ type: 'tool.started', session_id: 's1', run_id: 'r1', tool_call_id: 't1', name: 'edit' });
    write('one\ntwo\n');
    const res = await t.post(body);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
    expect(res.body.error.details.closed_tool_call_id).toBe('t1');
    const call = (await t.get('/api/hermes/sessions/s1')).body.tool_calls.find(
      (c: { tool_call_id: string }) => c.tool_call_id === 't1',
    );
    expect(call.status).not.toBe('running');
    expect(call.error).toContain('over the body limit');
    // Its change is stored, before the run ends.
    const change = await t.get('/api/hermes/sessions/s1/workspace-run-changes/tool%3At1');
    expect(change.status).toBe(200);
    expect(change.body.change.files.map((f: { path: string }) => f.path)).toEqual(['a.txt']);
  });
}

it('an over-limit event of another type closes nothing (positive control: the tool call stays open)', async () => {
  const { t } = await setup();
  await t.post({ type: 'run.started', session_id: 's1', run_id: 'r1' });
  await t.post({ type: 'tool.started', session_id: 's1', run_id: 'r1', tool_call_id: 't1', name: 'edit' });
  const res = await t.post({ type: 'message', session_id: 's1', role: 'assistant', content: huge, tool_call_id: 't1' });
  expect(res.status).toBe(413);
  expect(res.body.error.details.closed_tool_call_id).toBeUndefined();
  const call = (await t.get('/api/hermes/sessions/s1')).body.tool_calls.find(
    (c: { tool_call_id: string }) => c.tool_call_id === 't1',
  );
  expect(call.status).toBe('running');
});
