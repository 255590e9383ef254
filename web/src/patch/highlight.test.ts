import { describe, expect, it } from 'vitest';
import { loadHighlighter } from './highlight.ts';
import type { LanguageId } from './language.ts';

const SAMPLES: Record<LanguageId, string> = {
  typescript: 'const a: number = 1; // <script>alert(1)</script>\ninterface X { y: "&amp;" }',
  javascript: 'export default function f() { return `<img src=x onerror=alert(1)>`; }',
  vue: '<script setup lang="ts">\nconst x = ref("<b>");\n</script>\n<template><p :a="x">{{ x }}</p></template>\n<style>p { color: red; }</style>',
  json: '{ "a": "<script>", "b": [1, true, null] }',
  markdown: '# Title\n\n<img src=x onerror=alert(1)> *em* `code`',
  python: 'def f(x):\n    """doc <b>"""\n    return x & 1',
  go: 'package main\nfunc main() { println("<&>") }',
  rust: 'fn main() { let s = "<a>"; }',
  css: 'a > b { content: "</style><script>"; }',
  html: '<!doctype html><script>alert("x")</script><style>b{}</style><p title="&quot;">x</p>',
  bash: 'echo "<script>" && rm -f "$HOME/x" # done',
  yaml: 'key: "<img onerror=x>"\nlist:\n  - a # c',
};

describe('loadHighlighter', () => {
  it('highlights every supported language into tokens whose text is exactly the source', async () => {
    for (const [lang, source] of Object.entries(SAMPLES) as [LanguageId, string][]) {
      const hl = await loadHighlighter(lang);
      const lines = hl(source);
      expect(lines, lang).not.toBeNull();
      expect(lines!.map((l) => l.map((t) => t.text).join('')).join('\n'), lang).toBe(source);
      expect(
        lines!.flat().some((t) => t.cls.startsWith('hljs-')),
        `${lang} has syntax classes`,
      ).toBe(true);
    }
  });
});
