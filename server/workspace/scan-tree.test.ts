import fs from 'node:fs';
import { describe, expect, onTestFinished, test } from 'vitest';
import { createTempDir } from '../test-support/temp-repo.ts';
import { keyFromBytes, keyFromText } from '../paths/index.ts';
import { scanTree, type ScanRequest } from './scan-tree.ts';

const request = (root: string, over: Partial<ScanRequest> = {}): ScanRequest => ({
  root,
  starts: [''],
  pruneDirs: [],
  skipFiles: [],
  mode: 'git',
  gitignoreText: null,
  maxFiles: 1_000,
  timeoutMs: 60_000,
  ...over,
});

/** Writes a file whose path is given as raw bytes below `root`. */
function writeBytes(root: string, rel: Buffer, text: string): void {
  const abs = Buffer.concat([Buffer.from(root + '/'), rel]);
  fs.mkdirSync(abs.subarray(0, abs.lastIndexOf(0x2f)), { recursive: true });
  fs.writeFileSync(abs, text);
}

describe('scanTree', () => {
  test('the soft deadline is checked before each folder: a fixed-step clock cuts the walk after a known number of folders', () => {
    const root = createTempDir();
    onTestFinished(() => fs.rmSync(root, { recursive: true, force: true }));
    for (const d of ['a', 'b', 'c']) writeBytes(root, Buffer.from(`${d}/f.txt`), `${d}\n`);
    // Control: the same tree with the real clock and a generous deadline is walked whole.
    const whole = scanTree(request(root));
    expect(whole.truncated).toBeNull();
    expect(whole.listedDirs).toHaveLength(4);
    // Readings 0 (start), 4, 8, 12: the root and one folder fit a 10 ms deadline, the third check trips it.
    const cut = scanTree(request(root, { timeoutMs: 10, clockStepMs: 4 }));
    expect(cut.truncated).toBe('scan_time');
    expect(cut.listedDirs).toHaveLength(2);
    expect(cut.listedDirs[0]).toBe('');
    expect(cut.paths).toEqual([`${cut.listedDirs[1]}/f.txt`]);
  });

  test('minFolderKeyBytes: only the files of folders whose key is that long are recorded (and counted), the walk still goes deeper', () => {
    const root = createTempDir();
    onTestFinished(() => fs.rmSync(root, { recursive: true, force: true }));
    for (const f of ['top.txt', 'ab/mid.txt', 'ab/cd/low.txt', 'ab/cd/ef/lower.txt'])
      writeBytes(root, Buffer.from(f), 'x\n');
    // Control: without the option every file is recorded.
    expect(scanTree(request(root)).paths).toEqual(['top.txt', 'ab/mid.txt', 'ab/cd/low.txt', 'ab/cd/ef/lower.txt']);
    const deep = scanTree(request(root, { minFolderKeyBytes: 'ab/cd'.length, maxFiles: 2 }));
    expect(deep.paths).toEqual(['ab/cd/low.txt', 'ab/cd/ef/lower.txt']);
    expect(deep.truncated).toBeNull();
    expect(deep.listedDirs).toEqual(['ab/cd', 'ab/cd/ef']);
  });

  test('B13: names read as text or as bytes give the same keys: non-UTF-8 folders, a literal U+FFFD, UTF-8, byte order', () => {
    const root = createTempDir();
    onTestFinished(() => fs.rmSync(root, { recursive: true, force: true }));
    const badDir = Buffer.from([0x64, 0xff]); // "d\xff": not UTF-8
    writeBytes(root, Buffer.concat([badDir, Buffer.from('/inner.txt')]), 'a\n');
    writeBytes(root, Buffer.concat([badDir, Buffer.from('/deeper/x.txt')]), 'b\n');
    writeBytes(root, Buffer.from('fffd-\ufffd.txt'), 'c\n'); // valid UTF-8 that looks like a decoding failure
    writeBytes(root, Buffer.from('ünï/😀.txt'), 'd\n');
    writeBytes(root, Buffer.from('Z.txt'), 'e\n');
    writeBytes(root, Buffer.from('a.txt'), 'f\n');

    const t = scanTree(request(root));
    const d = keyFromBytes(badDir);
    expect(t.paths).toEqual([
      'Z.txt',
      'a.txt',
      keyFromText('fffd-\ufffd.txt'),
      `${d}/inner.txt`,
      `${d}/deeper/x.txt`,
      `${keyFromText('ünï')}/${keyFromText('😀.txt')}`,
    ]);
    expect([...t.size]).toEqual([2, 2, 2, 2, 2, 2]);
    expect(t.truncated).toBeNull();
    expect(t.listedDirs).toEqual(['', d, `${d}/deeper`, keyFromText('ünï')]);
  });

  test('B15: a start folder that is not UTF-8 is walked by its bytes; its own .git is skipped, a nested one is reported', () => {
    const root = createTempDir();
    onTestFinished(() => fs.rmSync(root, { recursive: true, force: true }));
    const start = Buffer.from([0x6e, 0xfe]);
    writeBytes(root, Buffer.concat([start, Buffer.from('/f.txt')]), 'x\n');
    writeBytes(root, Buffer.concat([start, Buffer.from('/.git/HEAD')]), 'ref\n');
    writeBytes(root, Buffer.concat([start, Buffer.from('/sub/.git/HEAD')]), 'ref\n');
    const key = keyFromBytes(start);
    const t = scanTree(request(root, { starts: [key] }));
    expect(t.paths).toEqual([`${key}/f.txt`]);
    expect(t.nestedRepos).toEqual([`${key}/sub`]);
  });
});
