import type { HLJSApi, LanguageFn } from 'highlight.js';
import type { LanguageId } from './language.ts';
import { tokensFromHighlight, type Token } from './tokens.ts';

type Loader = () => Promise<{ default: LanguageFn }>;

// One chunk per grammar, fetched the first time a file of that language is expanded.
const GRAMMARS: Record<string, Loader> = {
  typescript: () => import('highlight.js/lib/languages/typescript'),
  javascript: () => import('highlight.js/lib/languages/javascript'),
  xml: () => import('highlight.js/lib/languages/xml'),
  css: () => import('highlight.js/lib/languages/css'),
  json: () => import('highlight.js/lib/languages/json'),
  markdown: () => import('highlight.js/lib/languages/markdown'),
  python: () => import('highlight.js/lib/languages/python'),
  go: () => import('highlight.js/lib/languages/go'),
  rust: () => import('highlight.js/lib/languages/rust'),
  bash: () => import('highlight.js/lib/languages/bash'),
  yaml: () => import('highlight.js/lib/languages/yaml'),
};

/**
 * The grammars each language needs, and the one to highlight with. HTML and Vue files are xml,
 * whose `<script>` and `<style>` blocks switch to javascript and css when those are registered.
 */
const NEEDS: Record<LanguageId, { main: string; grammars: string[] }> = {
  typescript: { main: 'typescript', grammars: ['typescript'] },
  javascript: { main: 'javascript', grammars: ['javascript'] },
  vue: { main: 'xml', grammars: ['xml', 'javascript', 'typescript', 'css'] },
  html: { main: 'xml', grammars: ['xml', 'javascript', 'css'] },
  json: { main: 'json', grammars: ['json'] },
  markdown: { main: 'markdown', grammars: ['markdown'] },
  python: { main: 'python', grammars: ['python'] },
  go: { main: 'go', grammars: ['go'] },
  rust: { main: 'rust', grammars: ['rust'] },
  css: { main: 'css', grammars: ['css'] },
  bash: { main: 'bash', grammars: ['bash'] },
  yaml: { main: 'yaml', grammars: ['yaml'] },
};

let core: Promise<HLJSApi> | null = null;
const registered = new Map<string, Promise<void>>();

function loadCore(): Promise<HLJSApi> {
  core ??= import('highlight.js/lib/core').then((m) => m.default);
  return core;
}

function register(hljs: HLJSApi, name: string): Promise<void> {
  let p = registered.get(name);
  if (!p) {
    const loader = GRAMMARS[name]!;
    p = loader().then((m) => hljs.registerLanguage(name, m.default));
    // A failed chunk (server restarted with a new build) is retried on the next expand.
    p.catch(() => registered.delete(name));
    registered.set(name, p);
  }
  return p;
}

/** Highlights source text as lines of tokens. */
export type Highlighter = (source: string) => Token[][] | null;

/** Loads what a language needs and returns its highlighter. */
export async function loadHighlighter(language: LanguageId): Promise<Highlighter> {
  const need = NEEDS[language];
  const hljs = await loadCore();
  await Promise.all(need.grammars.map((g) => register(hljs, g)));
  return (source) => {
    try {
      return tokensFromHighlight(hljs.highlight(source, { language: need.main, ignoreIllegals: true }).value, source);
    } catch {
      return null; // a grammar error leaves the text plain
    }
  };
}
