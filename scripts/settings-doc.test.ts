import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, LIMIT_SETTINGS, SETTINGS } from '../server/config.ts';
import { documentedBlock, generatedBlock, SETTINGS_DOC, withBlock } from './settings-doc.ts';

/**
 * docs/settings.md lists every setting as the table of server/config.ts says: the block between
 * its markers is what `scripts/settings-doc.ts --write` generates, so a setting added, removed or
 * with another default fails here until the page is regenerated.
 */
describe('the settings page follows the settings table', () => {
  const page = fs.readFileSync(SETTINGS_DOC, 'utf8');

  it("docs/settings.md's block is the one the settings table generates", async () => {
    expect(documentedBlock(page)).toBe(await generatedBlock());
  });

  it('control: a page whose block drifted from the table (a default changed, a setting dropped) is told apart', async () => {
    const block = await generatedBlock();
    const otherDefault = withBlock(page, block.replace('| 7420 ', '| 7421 '));
    expect(otherDefault).not.toBe(page);
    expect(documentedBlock(otherDefault)).not.toBe(block);
    const dropped = withBlock(
      page,
      block
        .split('\n')
        .filter((l) => !l.includes('`RUNDIFF_RETENTION_DAYS`'))
        .join('\n'),
    );
    expect(documentedBlock(dropped)).not.toBe(block);
    // And the unchanged block written back is the page itself.
    expect(withBlock(page, block)).toBe(page);
  });

  it('every setting is on the page once, and every limit in the contract`s limits section', () => {
    const doc = documentedBlock(page) ?? '';
    for (const s of SETTINGS) expect(doc.split(`\`${s.env}\``).length - 1, s.env).toBe(1);
    const contract = fs.readFileSync(path.join(path.dirname(SETTINGS_DOC), 'contract.md'), 'utf8');
    const limitsSection = contract.slice(contract.indexOf('## 7. Limits'));
    for (const s of Object.values(LIMIT_SETTINGS)) expect(limitsSection, s.env).toContain(`\`${s.env}\``);
  });

  it("the contract's limits table states each limit's default as the settings table has it", () => {
    const contract = fs.readFileSync(path.join(path.dirname(SETTINGS_DOC), 'contract.md'), 'utf8');
    const rows = contract.slice(contract.indexOf('## 7. Limits')).split('\n');
    for (const [key, s] of Object.entries(LIMIT_SETTINGS)) {
      const row = rows.find((r) => r.includes(`\`${s.env}\``)) ?? '';
      const n = DEFAULT_LIMITS[key as keyof typeof DEFAULT_LIMITS];
      // `1,000,000`, `128 KiB`, `6 h`: the contract writes a default grouped or in its largest unit.
      const spellings = [n.toLocaleString('en-US'), /\((.+)\)/.exec(s.defaultText)?.[1]].filter(
        (x): x is string => x !== undefined,
      );
      expect(
        spellings.some((x) =>
          new RegExp(`(^|[^\\d,.])${x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\d,]|$)`).test(row),
        ),
        `${s.env}: ${spellings.join(' or ')} in ${row.slice(0, 120)}`,
      ).toBe(true);
    }
  });
});
