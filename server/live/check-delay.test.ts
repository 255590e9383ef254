import { describe, expect, it } from 'vitest';
import { DEFAULT_CHECK_DELAY, nextCheckDelayMs } from './check-delay.ts';

describe('pause between two periodic checks', () => {
  it('a cheap check is never repeated more often than once a second', () => {
    expect(nextCheckDelayMs(0, 1)).toBe(1_000);
    expect(nextCheckDelayMs(20, 1)).toBe(1_000);
  });

  it('a costly check keeps to a tenth of wall time: cost / (cost + pause) = 0.1', () => {
    const pause = nextCheckDelayMs(500, 1);
    expect(pause).toBe(4_500);
    expect(500 / (500 + pause)).toBeCloseTo(0.1, 5);
  });

  it('runs polling at once share the tenth between them', () => {
    const pause = nextCheckDelayMs(500, 4);
    expect(4 * (500 / (500 + pause))).toBeCloseTo(0.1, 5);
  });

  it('a very slow check still gets another one within the longest pause', () => {
    expect(nextCheckDelayMs(30_000, 1)).toBe(DEFAULT_CHECK_DELAY.maxIntervalMs);
  });

  it('the bounds are options', () => {
    expect(nextCheckDelayMs(100, 1, { minIntervalMs: 10, maxIntervalMs: 100_000, maxShare: 0.5 })).toBe(100);
  });
});
