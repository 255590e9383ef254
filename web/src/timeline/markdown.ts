import MarkdownIt from 'markdown-it';

/**
 * Assistant Markdown. `html: false` makes markdown-it escape any raw HTML in the source, so its
 * output holds only the tags it generates itself; its default link validation drops `javascript:`,
 * `vbscript:`, `file:` and non-image `data:` links.
 */
const md = new MarkdownIt({ html: false, linkify: true, breaks: false });

const renderLinkOpen =
  md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  // Links leave the app in a new tab without giving the opened page a handle on this one.
  token.attrSet('target', '_blank');
  token.attrSet('rel', 'noopener noreferrer');
  return renderLinkOpen(tokens, idx, options, env, self);
};

export function renderMarkdown(source: string): string {
  return md.render(source);
}
