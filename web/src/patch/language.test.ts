import { describe, expect, it } from 'vitest';
import { languageForPath } from './language.ts';

describe('languageForPath', () => {
  it('picks the grammar of each supported language by extension', () => {
    const cases: Record<string, string> = {
      'src/a.ts': 'typescript',
      'src/A.tsx': 'typescript',
      'lib/x.mjs': 'javascript',
      'src/Login.vue': 'vue',
      'package.json': 'json',
      'README.md': 'markdown',
      'tools/run.py': 'python',
      'cmd/main.go': 'go',
      'src/lib.rs': 'rust',
      'web/site.css': 'css',
      'index.html': 'html',
      'scripts/build.sh': 'bash',
      '.github/workflows/ci.yml': 'yaml',
      'config.yaml': 'yaml',
    };
    for (const [path, lang] of Object.entries(cases)) expect(languageForPath(path), path).toBe(lang);
  });

  it('ignores case, reads only the last segment and knows a few dot-files', () => {
    expect(languageForPath('docs/GUIDE.MD')).toBe('markdown');
    expect(languageForPath('a.ts/notes')).toBeNull();
    expect(languageForPath('home/.bashrc')).toBe('bash');
  });

  it('leaves unknown, extension-less and dot-only names plain', () => {
    expect(languageForPath('Makefile')).toBeNull();
    expect(languageForPath('data.bin')).toBeNull();
    expect(languageForPath('.gitignore')).toBeNull();
    expect(languageForPath('')).toBeNull();
  });
});
