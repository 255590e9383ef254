import { describe, expect, it } from 'vitest';
import { attribute, splitLines, type Attribution, type Snapshot } from './attribute.ts';

const names = (a: Attribution<string>[]) => a.map((x) => (x.kind === 'initial' ? 'initial' : `${x.kind}:${x.origin}`));

describe('attribute', () => {
  it('gives each line the step that last wrote it and keeps lines no step touched as before any run', () => {
    const got = attribute<string>([
      { lines: ['a', 'b', 'c'], origin: 'start' },
      { lines: ['a', 'B', 'c'], origin: 'run1' },
      { lines: ['a', 'B', 'c', 'd'], origin: 'run2' },
    ]);
    expect(got!.lines).toEqual(['a', 'B', 'c', 'd']);
    expect(names(got!.attributions)).toEqual(['initial', 'origin:run1', 'initial', 'origin:run2']);
  });

  it('lines written after an unkept state are not_kept, lines that survived it keep their origin', () => {
    const got = attribute<string>([
      { lines: ['a'], origin: 'start' },
      { lines: ['a', 'b'], origin: 'run1' },
      { lines: null, origin: 'run2' },
      { lines: ['a', 'b', 'x'], origin: 'run3' },
      { lines: ['a', 'b', 'x', 'y'], origin: 'run4' },
    ]);
    expect(names(got!.attributions)).toEqual(['initial', 'origin:run1', 'not_kept:run3', 'origin:run4']);
  });

  it('an unkept first state makes the first known lines not_kept rather than before any run', () => {
    const got = attribute<string>([
      { lines: null, origin: 'start' },
      { lines: ['a'], origin: 'run1' },
    ]);
    expect(names(got!.attributions)).toEqual(['not_kept:run1']);
  });

  it('a file deleted and written again is attributed to the step that wrote it again', () => {
    const got = attribute<string>([
      { lines: ['a'], origin: 'start' },
      { lines: [], origin: 'run1' },
      { lines: ['a'], origin: 'run2' },
    ]);
    expect(names(got!.attributions)).toEqual(['origin:run2']);
  });

  it('answers null when no state was kept', () => {
    expect(attribute<string>([{ lines: null, origin: 'x' }])).toBeNull();
    expect(attribute<string>([])).toBeNull();
  });

  it('splits text into lines, a final newline ending the last line', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('a\nb')).toEqual(['a', 'b']);
    expect(splitLines('\n')).toEqual(['']);
  });
});

/** A seeded generator (mulberry32): the same seed replays the same sequence. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Random edit sequences where every written line is unique, so the step that wrote a line is a
 * fact the replay knows without any diff: each line is tagged with its writer as it is written.
 */
describe('attribute against a brute-force replay of random edits', () => {
  it('agrees on every line of 400 random histories, unkept states and deletions included', () => {
    let checked = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const rand = rng(seed);
      const pick = (n: number) => Math.floor(rand() * n);
      let serial = 0;
      // The truth: each line with the index of the state that first held it (0: there at the start).
      let truth: { text: string; state: number }[] = [];
      for (let i = 0, n = pick(6); i < n; i++) truth.push({ text: `l${serial++}`, state: 0 });
      const kept = [rand() > 0.1];
      const snapshots: Snapshot<number>[] = [{ lines: kept[0] ? truth.map((l) => l.text) : null, origin: 0 }];
      const writer = new Map(truth.map((l) => [l.text, l.state]));
      for (let state = 1, states = 2 + pick(12); state < states; state++) {
        for (let e = 0, edits = pick(4); e < edits; e++) {
          const at = pick(truth.length + 1);
          if (rand() < 0.5 && truth.length > 0) truth.splice(Math.min(at, truth.length - 1), 1 + pick(2));
          else {
            const added = Array.from({ length: 1 + pick(3) }, () => ({ text: `l${serial++}`, state }));
            for (const l of added) writer.set(l.text, state);
            truth.splice(at, 0, ...added);
          }
        }
        if (rand() < 0.1) truth = [];
        kept.push(rand() > 0.15);
        snapshots.push({ lines: kept[state] ? truth.map((l) => l.text) : null, origin: state });
      }
      const last = kept.lastIndexOf(true);
      const got = attribute(snapshots);
      if (last === -1) {
        expect(got).toBeNull();
        continue;
      }
      const final = snapshots[last]!.lines!;
      expect(got!.lines, `seed ${seed}`).toEqual(final);
      final.forEach((text, i) => {
        const w = writer.get(text)!;
        // The first kept state holding the line (it is in every state from its writer on).
        const j = kept.indexOf(true, w);
        const expected: Attribution<number> =
          j === w && w === 0
            ? { kind: 'initial' }
            : j === w && kept[w - 1] === true
              ? { kind: 'origin', origin: w }
              : { kind: 'not_kept', origin: j };
        expect(got!.attributions[i], `seed ${seed}, line ${i} (${text})`).toEqual(expected);
        checked++;
      });
    }
    expect(checked).toBeGreaterThan(1000);
  });
});
