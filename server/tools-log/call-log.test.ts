import { expect, it } from 'vitest';
import { describeEachEngine } from '../test-support/store-engines.ts';
import { MAX_CALL_ARGUMENTS_CHARS } from '../../shared/index.ts';
import { createCallLog } from './call-log.ts';
import { argumentsText, commitOf } from './details.ts';

const call = (n: number) => ({
  tool: 'git_status' as const,
  repository: `repo-${n}`,
  ok: n % 2 === 0,
  error_code: n % 2 === 0 ? null : 'invalid_input',
  duration_ms: n / 10,
  created_at: 1_000 + n,
});

describeEachEngine('tool-call log', (engine) => {
  it('migration 0002 creates it; rows come back newest first with booleans and ids', async () => {
    const store = await engine.open();
    const log = createCallLog(store);
    const first = await log.record(call(1));
    await log.record(call(2));
    expect(await log.list(10)).toEqual([
      { id: expect.any(String), ...call(2), arguments: null, commit: null },
      { id: first.id, ...call(1), arguments: null, commit: null },
    ]);
    expect(await log.list(1)).toHaveLength(1);
  });

  it('keeps only the newest maxRows rows (the log is global, so it has its own bound)', async () => {
    const store = await engine.open();
    const log = createCallLog(store, { maxRows: 5 });
    for (let i = 0; i < 12; i++) await log.record(call(i));
    expect((await log.list(100)).map((c) => c.repository)).toEqual([
      'repo-11',
      'repo-10',
      'repo-9',
      'repo-8',
      'repo-7',
    ]);
  });

  it("keeps a call's arguments (cut to a bound, the cut marked) and a commit's hash and summary", async () => {
    const store = await engine.open();
    const log = createCallLog(store);
    const hash = 'a'.repeat(40);
    const input = { message: 'Fix', paths: ['a.ts'] };
    await log.record({
      ...call(1),
      tool: 'git_commit',
      arguments: argumentsText(input),
      commit: commitOf('git_commit', true, { hash, summary: '[main aaaaaaa] Fix', files: [] }),
    });
    expect((await log.list(1))[0]).toMatchObject({
      arguments: '{"message":"Fix","paths":["a.ts"]}',
      commit: { hash, summary: '[main aaaaaaa] Fix' },
    });
    const long = argumentsText({ message: 'x'.repeat(5_000) })!;
    expect(long).toHaveLength(MAX_CALL_ARGUMENTS_CHARS);
    expect(long.endsWith('…')).toBe(true);
    // A refused commit and other tools carry no commit.
    expect(commitOf('git_commit', false, null)).toBeNull();
    expect(commitOf('git_status', true, { hash, summary: 'x' })).toBeNull();
  });

  it('same-millisecond calls keep their arrival order', async () => {
    const store = await engine.open();
    const log = createCallLog(store);
    for (let i = 0; i < 3; i++) await log.record({ ...call(i), created_at: 5 });
    expect((await log.list(10)).map((c) => c.repository)).toEqual(['repo-2', 'repo-1', 'repo-0']);
  });
});
