import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../store/index.ts';
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

describe('tool-call log', () => {
  it('migration 0002 creates it; rows come back newest first with booleans and ids', () => {
    const db = openDatabase(':memory:');
    onTestFinished(() => void db.close());
    const log = createCallLog(db);
    const first = log.record(call(1));
    log.record(call(2));
    expect(log.list(10)).toEqual([
      { id: expect.any(String), ...call(2), arguments: null, commit: null },
      { id: first.id, ...call(1), arguments: null, commit: null },
    ]);
    expect(log.list(1)).toHaveLength(1);
  });

  it('keeps only the newest maxRows rows (the log is global, so it has its own bound)', () => {
    const db = openDatabase(':memory:');
    onTestFinished(() => void db.close());
    const log = createCallLog(db, { maxRows: 5 });
    for (let i = 0; i < 12; i++) log.record(call(i));
    expect(log.list(100).map((c) => c.repository)).toEqual(['repo-11', 'repo-10', 'repo-9', 'repo-8', 'repo-7']);
  });

  it("keeps a call's arguments (cut to a bound, the cut marked) and a commit's hash and summary", () => {
    const db = openDatabase(':memory:');
    onTestFinished(() => void db.close());
    const log = createCallLog(db);
    const hash = 'a'.repeat(40);
    const input = { message: 'Fix', paths: ['a.ts'] };
    log.record({
      ...call(1),
      tool: 'git_commit',
      arguments: argumentsText(input),
      commit: commitOf('git_commit', true, { hash, summary: '[main aaaaaaa] Fix', files: [] }),
    });
    expect(log.list(1)[0]).toMatchObject({
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

  it('same-millisecond calls keep their arrival order', () => {
    const db = openDatabase(':memory:');
    onTestFinished(() => void db.close());
    const log = createCallLog(db);
    for (let i = 0; i < 3; i++) log.record({ ...call(i), created_at: 5 });
    expect(log.list(10).map((c) => c.repository)).toEqual(['repo-2', 'repo-1', 'repo-0']);
  });
});
