/** The highlight.js grammars the patch viewer loads, one chunk each, by file extension. */
export type LanguageId =
  | 'typescript'
  | 'javascript'
  | 'vue'
  | 'json'
  | 'markdown'
  | 'python'
  | 'go'
  | 'rust'
  | 'css'
  | 'html'
  | 'bash'
  | 'yaml';

const BY_EXTENSION: Record<string, LanguageId> = {
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  vue: 'vue',
  json: 'json',
  jsonc: 'json',
  json5: 'json',
  md: 'markdown',
  markdown: 'markdown',
  py: 'python',
  pyi: 'python',
  go: 'go',
  rs: 'rust',
  css: 'css',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  svg: 'html',
  sh: 'bash',
  bash: 'bash',
  zsh: 'bash',
  yml: 'yaml',
  yaml: 'yaml',
};

/** Whole file names that say their language without an extension. */
const BY_NAME: Record<string, LanguageId> = {
  '.bashrc': 'bash',
  '.zshrc': 'bash',
  '.profile': 'bash',
  '.bash_profile': 'bash',
  'tsconfig.json': 'json',
};

/**
 * The language of a path (the new path of a rename), or null for text shown plain. Only the last
 * path segment counts; matching ignores case (`README.MD`, `Setup.PY`).
 */
export function languageForPath(path: string): LanguageId | null {
  const name = (path.split('/').pop() ?? '').toLowerCase();
  const named = BY_NAME[name];
  if (named) return named;
  const dot = name.lastIndexOf('.');
  if (dot <= 0 && !name.startsWith('.')) return null;
  return BY_EXTENSION[name.slice(dot + 1)] ?? null;
}
