import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keyFromText } from '../paths/index.ts';
import { createTempRepo, type TempRepo } from '../test-support/temp-repo.ts';
import { computeDelta } from './compute-delta.ts';
import type { CandidateChange, DeltaInput } from './types.ts';

const LIMITS: DeltaInput['limits'] = {
  maxChangedFiles: 100,
  maxFilePatchBytes: 64 * 1024 * 1024,
  maxRunPatchBytes: 64 * 1024 * 1024,
  diffTimeoutMs: 1_000,
};

const side = (bytes: Buffer, mode = '100644') => ({ bytes, size: bytes.length, mode });
/** Bytes git takes for binary: a NUL early on. */
const binary = (n: number) => Buffer.concat([Buffer.from([0, 1, 2]), randomBytes(n)]);

let repo: TempRepo | null = null;
afterEach(() => {
  repo?.cleanup();
  repo = null;
});

/** Applies `patch` with the real `git apply` on a tree holding `start`, and reads back every file. */
function applied(start: Record<string, Buffer>, patch: string): Record<string, Buffer> {
  repo = createTempRepo({ files: start });
  fs.writeFileSync(path.join(repo.dir, '.patch'), patch);
  repo.git('apply', '--whitespace=nowarn', '.patch');
  fs.rmSync(path.join(repo.dir, '.patch'));
  const out: Record<string, Buffer> = {};
  for (const name of fs.readdirSync(repo.dir)) if (name !== '.git') out[name] = repo.read(name);
  return out;
}

describe('binary patches for a patch that is applied', () => {
  it('gives git a binary patch that turns every start side into its end side', async () => {
    const kept = binary(300);
    const before = binary(5_000);
    const after = Buffer.concat([before.subarray(0, 2_000), binary(40), before.subarray(2_000)]);
    const gone = binary(10);
    const added = binary(70_000);
    const empty = Buffer.from([0]);
    const changes: CandidateChange[] = [
      { path: keyFromText('changed.bin'), before: side(before), after: side(after) },
      { path: keyFromText('gone.bin'), before: side(gone), after: null },
      { path: keyFromText('new.bin'), before: null, after: side(added) },
      { path: keyFromText('tiny.bin'), before: null, after: side(empty) },
    ];
    const delta = await computeDelta({ changes, limits: LIMITS, binaryPatches: true });
    expect(delta.files.map((f) => [f.path, f.binary, f.omitted_reason])).toEqual([
      ['changed.bin', true, null],
      ['gone.bin', true, null],
      ['new.bin', true, null],
      ['tiny.bin', true, null],
    ]);
    const patch = delta.files.map((f) => f.patch).join('');
    expect(patch).toContain('GIT binary patch');
    const end = applied({ 'changed.bin': before, 'gone.bin': gone, 'kept.bin': kept }, patch);
    expect(end).toEqual({ 'changed.bin': after, 'kept.bin': kept, 'new.bin': added, 'tiny.bin': empty });
  });

  it('applies in reverse too: the end tree goes back to the start tree', async () => {
    const before = binary(1_000);
    const after = binary(900);
    const delta = await computeDelta({
      changes: [{ path: keyFromText('a.bin'), before: side(before), after: side(after, '100755') }],
      limits: LIMITS,
      binaryPatches: true,
    });
    const patch = delta.files[0]!.patch!;
    expect(patch).toMatch(/^old mode 100644\nnew mode 100755\n/m);
    repo = createTempRepo({ files: { 'a.bin': after } });
    fs.chmodSync(path.join(repo.dir, 'a.bin'), 0o755);
    fs.writeFileSync(path.join(repo.dir, '.patch'), patch);
    repo.git('apply', '-R', '.patch');
    expect(repo.read('a.bin').equals(before)).toBe(true);
  });

  it('leaves a binary change without a patch by default, as a stored row has it', async () => {
    const delta = await computeDelta({
      changes: [{ path: keyFromText('a.bin'), before: side(binary(10)), after: side(binary(10)) }],
      limits: LIMITS,
    });
    expect(delta.files[0]).toMatchObject({ binary: true, patch: null, omitted_reason: 'binary' });
  });

  it('names the file without a patch when one side has no bytes', async () => {
    const delta = await computeDelta({
      changes: [
        {
          path: keyFromText('a.bin'),
          before: { bytes: null, size: 9_000_000, mode: '100644', unavailable: 'too_large' },
          after: side(binary(10)),
        },
      ],
      limits: LIMITS,
      binaryPatches: true,
    });
    expect(delta.files[0]).toMatchObject({ binary: true, patch: null, omitted_reason: 'binary' });
  });
});
