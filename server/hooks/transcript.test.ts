import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { transcriptLines, type TurnSpec } from '../test-support/claude-transcript.ts';
import { claudeCodeUsage } from './transcripts/claude-code.ts';
import { transcriptUsage as readUsage } from './transcript.ts';

const transcriptUsage = (file: string, promptId: string | null, maxBytes?: number) =>
  readUsage(file, promptId, claudeCodeUsage, maxBytes);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function write(text: string, name = 'session.jsonl'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-transcript-'));
  dirs.push(dir);
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}
const msg = (id: string, input: number, output: number, cacheRead = 0, cacheWrite = 0, blocks = 1) => ({
  id,
  input,
  output,
  cacheRead,
  cacheWrite,
  blocks,
});
const TWO: TurnSpec[] = [
  { prompt: 'one', promptId: 'p1', messages: [msg('m1', 10, 5, 100, 50, 2), msg('m2', 3, 7, 200, 0)] },
  { prompt: 'two', promptId: 'p2', messages: [msg('m3', 1, 2, 300, 4, 3)] },
];

describe('transcriptUsage with Claude Code transcripts', () => {
  it('sums the messages after the run prompt, each message id once however many lines it takes', () => {
    const file = write(transcriptLines('s', TWO));
    expect(transcriptUsage(file, 'p1')).toEqual({ input: 13, output: 12, cache_read: 300, cache_write: 50 });
    expect(transcriptUsage(file, 'p2')).toEqual({ input: 1, output: 2, cache_read: 300, cache_write: 4 });
  });

  it('without prompt ids, the run is what follows the last typed prompt (a tool result is not one)', () => {
    const file = write(
      transcriptLines(
        's',
        TWO.map(({ promptId: _, ...t }) => t),
      ),
    );
    expect(transcriptUsage(file, 'p2')).toEqual({ input: 1, output: 2, cache_read: 300, cache_write: 4 });
  });

  it('gives nothing for a prompt id the transcript does not hold, a run without usage, or a torn last line', () => {
    const file = write(transcriptLines('s', TWO));
    expect(transcriptUsage(file, 'p9')).toBeNull();
    expect(
      transcriptUsage(write(transcriptLines('s', [{ prompt: 'x', promptId: 'p1', messages: [] }])), 'p1'),
    ).toBeNull();
    // A line being written when the hook ran counts as not there; the whole lines before still count.
    const torn = write(transcriptLines('s', TWO) + '{"type":"assistant","message":{"id":"m4","usage":{"input_to');
    expect(transcriptUsage(torn, 'p2')).toEqual({ input: 1, output: 2, cache_read: 300, cache_write: 4 });
  });

  it('reads only the tail: a run whose prompt is before the bytes read gives nothing', () => {
    const text = transcriptLines('s', TWO);
    const file = write(text);
    const fromSecondPrompt = Buffer.byteLength(text) - text.indexOf('{"parentUuid":"u5"');
    // The control: a bound that holds the second prompt's line whole.
    expect(transcriptUsage(file, 'p2', fromSecondPrompt)).not.toBeNull();
    expect(transcriptUsage(file, 'p2', fromSecondPrompt - 1)).toBeNull();
  });

  it('reads no link, no folder, no file that is gone, and nothing but an absolute .jsonl path', () => {
    const file = write(transcriptLines('s', TWO));
    expect(transcriptUsage(file, 'p2')).not.toBeNull();
    const link = path.join(path.dirname(file), 'link.jsonl');
    fs.symlinkSync(file, link);
    expect(transcriptUsage(link, 'p2')).toBeNull();
    const other = write(transcriptLines('s', TWO), 'session.txt');
    expect(transcriptUsage(other, 'p2')).toBeNull();
    expect(transcriptUsage(path.relative(process.cwd(), file), 'p2')).toBeNull();
    const folder = path.join(path.dirname(file), 'dir.jsonl');
    fs.mkdirSync(folder);
    expect(transcriptUsage(folder, 'p2')).toBeNull();
    fs.rmSync(file);
    expect(transcriptUsage(file, 'p2')).toBeNull();
  });
});
