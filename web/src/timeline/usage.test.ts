import { describe, expect, it } from 'vitest';
import { dollars, shortTokens, usageCell, usageDetail, usageLine } from './usage.ts';

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

describe('money a run cost, as its agent priced it', () => {
  it('cents from a cent up, two significant digits below, never $0.00', () => {
    expect([0.42, 12.3, 1234.5, 0.01, 0.0042, 0.00417, 0.0000012, 0.0000001].map(dollars)).toEqual([
      '$0.42',
      '$12.30',
      '$1,234.50',
      '$0.01',
      '$0.0042',
      '$0.0042',
      '$0.0000012',
      '<$0.000001',
    ]);
  });

  it('the line and the cell add the price only when the agent gave one; the title has it in full', () => {
    const tokens = { input: 345, output: 1234, cache_read: 12_000, cache_write: 0 };
    expect(usageLine({ ...tokens, cost_usd: 0.4375 })).toBe('12.3k tokens in · 1.2k out · $0.44');
    expect(usageCell({ ...tokens, cost_usd: 0.4375 })).toBe('12.3k in · 1.2k out · $0.44');
    expect(usageCell(tokens)).toBe('12.3k in · 1.2k out');
    expect(usageCell(null)).toBeNull();
    expect(usageDetail({ ...tokens, cost_usd: 0.4375 })).toMatch(
      /tokens, as the agent reported them; \$0\.4375 as priced by the agent$/,
    );
    expect(usageDetail(tokens)).not.toMatch(/\$/);
  });
});
