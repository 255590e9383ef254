import { describe, expect, it } from 'vitest';
import { shortTokens, usageDetail, usageLine } from './usage.ts';

describe('token usage display', () => {
  it('shortens counts without rounding up past what was used', () => {
    expect([0, 950, 999, 1000, 12_345, 99_999, 123_456, 1_250_000, 345_678_901].map(shortTokens)).toEqual([
      '0',
      '950',
      '999',
      '1k',
      '12.3k',
      '99.9k',
      '123k',
      '1.2M',
      '345M',
    ]);
  });

  it('counts cached input as read, lists the four figures, and shows nothing without a report', () => {
    const u = { input: 345, output: 1234, cache_read: 12_000, cache_write: 0 };
    expect(usageLine(u)).toBe('12.3k tokens in · 1.2k out');
    expect(usageDetail(u)).toBe(
      'Input 345 · output 1,234 · cache read 12,000 · cache write 0 tokens, as the agent reported them',
    );
    expect(usageLine(null)).toBeNull();
  });
});
