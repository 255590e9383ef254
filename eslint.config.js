import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import vue from 'eslint-plugin-vue';
import globals from 'globals';
import boundaries from './scripts/import-boundaries.js';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'test-results/**', 'playwright-report/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...vue.configs['flat/recommended'],
  {
    files: ['**/*.vue'],
    languageOptions: { parserOptions: { parser: tseslint.parser } },
  },
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'vue/no-v-html': 'error',
      'vue/multi-word-component-names': 'off',
      'vue/max-attributes-per-line': 'off',
      'vue/singleline-html-element-content-newline': 'off',
      'vue/html-self-closing': 'off',
      // A component used in a template but never imported renders nothing and only warns at run time.
      'vue/no-undef-components': ['error', { ignorePatterns: ['^Router(Link|View)$'] }],
    },
  },
  {
    // Type-aware rules where they catch real mistakes: every store call returns a Promise, and one
    // left floating (or passed where a callback's result is ignored) loses its error and its order.
    // The no-unsafe-* family stays off: test bodies read parsed JSON as `any` by design, and its
    // ~1,100 findings would drown the signal.
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeCheckedOnly],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      // An async function without await is how a synchronous answer meets a Promise interface.
      '@typescript-eslint/require-await': 'off',
      // expect(obj.method) and method tables pass methods unbound on purpose.
      '@typescript-eslint/unbound-method': 'off',
      // A string-or-sentinel union (`string | 'absent'`) names its sentinels for the reader.
      '@typescript-eslint/no-redundant-type-constituents': 'off',
      // A caught value passed on as it came (`catch (err) { reject(err) }`) is not a new throw.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
    },
  },
  {
    // The layers: which part of the repository may import which (the table is in the rule's file).
    files: ['server/**/*.ts', 'shared/**/*.ts', 'web/**/*.ts', 'web/**/*.vue'],
    plugins: { rundiff: boundaries },
    rules: { 'rundiff/import-boundaries': 'error' },
  },
);
