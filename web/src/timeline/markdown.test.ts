import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './markdown.ts';

describe('renderMarkdown', () => {
  it('escapes raw HTML such as <script> and event-handler attributes', () => {
    const html = renderMarkdown('Hello <script>alert(1)</script> and <img src=x onerror=alert(1)>');
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('renders code blocks with their text escaped', () => {
    const html = renderMarkdown('```ts\nconst a = "<b>";\n```');
    expect(html).toContain('<pre><code class="language-ts">const a = &quot;&lt;b&gt;&quot;;\n</code></pre>');
  });

  it('does not link javascript: URLs and opens real links in a new tab safely', () => {
    expect(renderMarkdown('[x](javascript:alert(1))')).not.toContain('href="javascript:');
    const html = renderMarkdown('see https://example.com');
    expect(html).toContain('<a href="https://example.com" target="_blank" rel="noopener noreferrer">');
  });
});
