import { describe, expect, it } from 'vitest';
import type { BridgeEvent } from '../../shared/index.ts';
import { createHookRuntime } from './runtime.ts';

/** A recorder that answers each event only when the test lets it, recording the order of arrival. */
function gatedRecorder() {
  const seen: BridgeEvent[] = [];
  const gates: (() => void)[] = [];
  return {
    seen,
    release: () => gates.splice(0).forEach((g) => g()),
    recorder: {
      handle: (e: BridgeEvent) => {
        seen.push(e);
        return new Promise<unknown>((resolve) => gates.push(() => resolve({})));
      },
    },
  };
}

describe('hook runtime', () => {
  it('runs the payloads of one agent session one after another, in the order they arrived', async () => {
    const g = gatedRecorder();
    const logs: string[] = [];
    const runtime = createHookRuntime({ recorder: g.recorder, log: (m) => logs.push(m) });
    const base = { session_id: 's', cwd: '/w' };
    const first = runtime.handle('claude-code', {
      ...base,
      hook_event_name: 'UserPromptSubmit',
      prompt_id: 'p',
      prompt: 'x',
    });
    const second = runtime.handle('claude-code', { ...base, hook_event_name: 'Stop', last_assistant_message: 'done' });
    // Until the first payload's events are answered, the second's mapping has not run.
    await new Promise((r) => setImmediate(r));
    expect(g.seen.map((e) => e.type)).toEqual(['session.upsert']);
    let settled = false;
    void Promise.all([first, second]).then(() => (settled = true));
    for (let i = 0; i < 100 && !settled; i++) {
      g.release();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all([first, second]);
    expect(g.seen.map((e) => e.type)).toEqual(['session.upsert', 'run.started', 'message', 'message', 'run.completed']);
    expect(logs).toEqual([]);
  });

  it('sends every event under the agent-scoped session, whatever the mapping wrote', async () => {
    const g = gatedRecorder();
    const runtime = createHookRuntime({
      recorder: g.recorder,
      log: () => {},
      mappers: {
        'claude-code': {
          agent: 'claude-code',
          checkedVersion: 'test',
          map: (_p, state) => ({
            sessionId: 'mine',
            state,
            events: [{ type: 'session.upsert', session_id: 'codex:other' }],
          }),
        },
      },
    });
    const done = runtime.handle('claude-code', {});
    await new Promise((r) => setImmediate(r));
    g.release();
    await done;
    expect(g.seen.map((e) => e.session_id)).toEqual(['claude-code:mine']);
  });

  it('a mapping that throws, or an event the bridge refuses, is logged and the rest still sent', async () => {
    const logs: string[] = [];
    const runtime = createHookRuntime({
      recorder: { handle: async (e) => (e.type === 'run.started' ? Promise.reject(new Error('boom')) : {}) },
      log: (m) => logs.push(m),
    });
    const out = await runtime.handle('claude-code', {
      session_id: 's',
      cwd: '/w',
      hook_event_name: 'UserPromptSubmit',
      prompt: 'x',
    });
    expect(out.sent).toBe(2);
    expect(out.failures).toEqual(['run.started refused: boom']);
    expect(logs).toEqual(['hook claude-code (claude-code:s): run.started refused: boom']);
    const throwing = createHookRuntime({
      recorder: { handle: async () => ({}) },
      log: (m) => logs.push(m),
      mappers: {
        codex: {
          agent: 'codex',
          checkedVersion: 't',
          map: () => {
            throw new Error('bad mapping');
          },
        },
      },
    });
    expect((await throwing.handle('codex', {})).failures).toEqual(['the codex mapping failed: bad mapping']);
  });
});
