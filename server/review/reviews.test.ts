import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import { silentEmitter } from '../runs/index.ts';
import type { NewChange, NewFile, PendingContent, PreparedContent, RawContent, Store } from '../store/index.ts';
import { describeEachEngine } from '../test-support/store-engines.ts';
import { createReviews } from './reviews.ts';

/**
 * Where a comment stands, against a real store (each engine): a later change whose contents are still
 * being written is read from its patch for now, and read again once they are there.
 */

const S = 's';

async function change(store: Store, n: number, patch: string): Promise<string> {
  const c: NewChange = {
    change_id: `run:r${n}`,
    session_id: S,
    run_id: `r${n}`,
    tool_call_id: null,
    source: 'run',
    workspace: '/w',
    workspace_kind: 'git',
    started_at: n * 10,
    finished_at: n * 10 + 5,
    changed_count: 1,
    added_count: 0,
    modified_count: 1,
    deleted_count: 0,
    renamed_count: 0,
    binary_count: 0,
    truncated: false,
    truncated_reasons: [],
    total_patch_bytes: patch.length,
    overlapping: false,
    omitted_count: 0,
    created_at: n * 10 + 5,
  };
  const f: NewFile = {
    path: 'f.txt',
    old_path: null,
    change_type: 'modified',
    additions: 1,
    deletions: 1,
    binary: false,
    truncated: false,
    size_before: 100,
    size_after: 100,
    patch_bytes: patch.length,
    omitted_reason: null,
    patch,
  };
  return (await store.changes.insert(c, [f], 100)).files[0]!.id;
}

const prepared = (text: string) => {
  const data = Buffer.from(text);
  return {
    mode: '100644',
    sha256: createHash('sha256').update(data).digest('hex'),
    size: data.length,
    codec: 'raw' as const,
    data,
  };
};

/** What `record` answers for contents given prepared: only prepared sides, ready for `fill`. */
const ready = (items: PendingContent<PreparedContent | RawContent>[]): PendingContent[] =>
  items.map((p) => {
    if (!('sha256' in p.content)) throw new Error('a raw side where only prepared ones were recorded');
    return { ...p, content: p.content };
  });

describeEachEngine('placing comments', (engine) => {
  it('a later change whose contents are still being written is read again once they are stored', async () => {
    const store = await engine.open();
    await store.sessions.upsert(S, { workspace: '/w' }, 1);
    const reviews = createReviews({ store, emitter: silentEmitter });
    const file = await change(store, 1, 'diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -2 +2 @@\n-b\n+B\n');
    // The first change's contents are kept whole: a,B,c,d,e.
    await store.contents.fill(
      ready(
        await store.contents.record(S, 'run:r1', [
          { before: prepared('a\nb\nc\nd\ne\n'), after: prepared('a\nB\nc\nd\ne\n') },
        ]),
      ),
      1 << 30,
      1,
    );
    const c = await reviews.createComment(S, {
      change_id: 'run:r1',
      file_id: file,
      side: 'after',
      start_line: 4,
      end_line: 5,
      body: 'x',
    });
    expect(c.anchor.lines).toEqual(['d', 'e']);

    // A later change edits line 1; its patch does not show lines 4-5, and its contents are pending.
    await change(store, 2, 'diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+A\n');
    const pending = await store.contents.record(S, 'run:r2', [
      { before: prepared('a\nB\nc\nd\ne\n'), after: prepared('A\nB\nc\nd\ne\n') },
    ]);
    expect((await reviews.view(S)).comments[0]).toMatchObject({ outdated: true, current: null });
    await store.contents.fill(ready(pending), 1 << 30, 2);
    // No write to the session's rows happened in between: only not keeping the provisional answer
    // lets the stored contents count.
    expect((await reviews.view(S)).comments[0]).toMatchObject({ outdated: false, current: null });
  });
});
