import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

/**
 * The import-boundary rule, run through the project's own eslint.config.js on small probe files at
 * real paths of the tree: every wrong-way import is an error, and the same file importing the right
 * way is clean (the control that shows the probe path is really linted by the rule).
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RULE = 'rundiff/import-boundaries';
// The probes are not files of any tsconfig, so the type-aware rules (which need a program) are off
// for them; the boundary rule reads only the import specifiers.
const eslint = new ESLint({ cwd: ROOT, overrideConfig: tseslint.configs.disableTypeChecked });

/** The rule's messages for `code` linted as if it were the file at `filePath`. */
async function boundaryErrors(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, filePath) });
  const messages = result!.messages;
  const fatal = messages.filter((m) => m.fatal);
  if (fatal.length) throw new Error(`${filePath} did not parse: ${fatal.map((m) => m.message).join('; ')}`);
  return messages.filter((m) => m.ruleId === RULE).map((m) => m.message);
}

const importing = (spec: string) => `import { probe } from '${spec}';\nexport const used = probe;\n`;

/** [file, wrong-way import, right-way import from the same file] */
const BOUNDARIES: Array<[string, string, string]> = [
  // web/ imports only shared/
  ['web/src/timeline/probe.ts', '../../../server/runs/index.ts', '../../../shared/index.ts'],
  ['web/src/timeline/probe.ts', '../../../server/api/index.ts', 'vue'],
  ['web/src/timeline/probe.ts', 'node:fs', './timeline.ts'],
  // shared/ imports nothing of server/ or web/, and no package
  ['shared/probe.ts', '../server/errors.ts', './dto.ts'],
  ['shared/probe.ts', '../web/src/api/index.ts', './limits.ts'],
  ['shared/probe.ts', 'zod', './errors.ts'],
  // delta/ does no I/O and imports only shared/ and paths/
  ['server/delta/probe.ts', 'node:fs', 'node:crypto'],
  ['server/delta/probe.ts', 'node:child_process', 'diff'],
  ['server/delta/probe.ts', 'fs/promises', './types.ts'],
  ['server/delta/probe.ts', '../workspace/index.ts', '../paths/index.ts'],
  ['server/delta/probe.ts', '../git/index.ts', '../../shared/index.ts'],
  ['server/delta/probe.ts', '../fs/index.ts', '../paths/index.ts'],
  // edges do not import each other
  ['server/socket/probe.ts', '../api/index.ts', '../security/index.ts'],
  ['server/api/probe.ts', '../socket/index.ts', '../runs/index.ts'],
  ['server/cli/probe.ts', '../api/index.ts', '../main.ts'],
  ['server/index.ts', './api/index.ts', './runs/index.ts'],
  // runs -> checkpoint/delta/store/git/workspace, never up
  ['server/runs/probe.ts', '../api/index.ts', '../checkpoint/index.ts'],
  ['server/runs/probe.ts', '../socket/index.ts', '../store/index.ts'],
  ['server/checkpoint/probe.ts', '../runs/index.ts', '../workspace/index.ts'],
  ['server/store/probe.ts', '../runs/index.ts', '../errors.ts'],
  ['server/workspace/probe.ts', '../checkpoint/index.ts', '../git/index.ts'],
  // checkpoint strategies: neither imports the other; the leaf and the model import no strategy
  ['server/checkpoint/walk/probe.ts', '../git-status/index.ts', '../common/trace.ts'],
  ['server/checkpoint/git-status/probe.ts', '../walk/index.ts', '../strategy.ts'],
  ['server/checkpoint/common/probe.ts', '../walk/index.ts', '../model.ts'],
  ['server/checkpoint/common/probe.ts', '../registry.ts', '../../git/index.ts'],
  ['server/checkpoint/model.ts', './common/trace.ts', '../paths/index.ts'],
  ['server/git/probe.ts', '../workspace/index.ts', '../fs/index.ts'],
  ['server/git/tools/probe.ts', '../../workspace/index.ts', '../../paths/index.ts'],
  // leaves import nothing above them
  ['server/paths/probe.ts', '../fs/index.ts', './path-bytes.ts'],
  ['server/fs/probe.ts', '../workspace/index.ts', '../paths/index.ts'],
  ['server/security/probe.ts', '../api/index.ts', '../errors.ts'],
  // no production file imports test code
  ['server/api/probe.ts', '../test-support/index.ts', '../runs/index.ts'],
  ['server/git/tools/probe.ts', '../../test-support/tool-harness.ts', './call-tool.ts'],
  ['server/delta/probe.ts', './compute-delta.test.ts', './compute-delta.ts'],
];

describe('import boundaries', () => {
  it.each(BOUNDARIES)('%s: importing %s is an error, importing %s is not', async (file, wrong, right) => {
    expect(await boundaryErrors(importing(wrong), file)).toHaveLength(1);
    expect(await boundaryErrors(importing(right), file)).toEqual([]);
  });

  it('checks re-exports, dynamic imports and type-only imports as well as plain imports', async () => {
    const file = 'server/socket/probe.ts';
    expect(await boundaryErrors(`export { probe } from '../api/index.ts';\n`, file)).toHaveLength(1);
    expect(await boundaryErrors(`export * from '../api/index.ts';\n`, file)).toHaveLength(1);
    expect(await boundaryErrors(`export const load = () => import('../api/index.ts');\n`, file)).toHaveLength(1);
    expect(
      await boundaryErrors(`import type { Probe } from '../api/index.ts';\nexport type P = Probe;\n`, file),
    ).toHaveLength(1);
    expect(await boundaryErrors(`export const load = () => import('../runs/index.ts');\n`, file)).toEqual([]);
  });

  it('checks the script of a Vue component', async () => {
    const sfc = (spec: string) =>
      `<script setup lang="ts">\nimport { probe } from '${spec}';\nconst used = probe;\n</script>\n<template><p>{{ used }}</p></template>\n`;
    const file = 'web/src/components/Probe.vue';
    expect(await boundaryErrors(sfc('../../../server/runs/index.ts'), file)).toHaveLength(1);
    expect(await boundaryErrors(sfc('../../../shared/index.ts'), file)).toEqual([]);
  });

  it('lets tests and test helpers reach across the server layers, but keeps web tests on web/ and shared/', async () => {
    expect(await boundaryErrors(importing('../test-support/server-harness.ts'), 'server/delta/probe.test.ts')).toEqual(
      [],
    );
    expect(await boundaryErrors(importing('../main.ts'), 'server/test-support/probe.ts')).toEqual([]);
    expect(await boundaryErrors(importing('../../../server/main.ts'), 'web/src/api/probe.test.ts')).toHaveLength(1);
  });

  it('reports an import cycle within server/checkpoint, naming its files; the same file without it is clean', async () => {
    // walk/collect.ts imports walk/coverage.ts: coverage importing collect closes a cycle.
    const file = 'server/checkpoint/walk/coverage.ts';
    expect(await boundaryErrors(importing('./collect.ts'), file)).toEqual([
      expect.stringContaining(
        'import cycle within server/checkpoint: walk/coverage.ts -> walk/collect.ts -> walk/coverage.ts',
      ),
    ]);
    expect(await boundaryErrors(importing('./scan-phase.ts'), file)).toEqual([]);
    // Type-only imports count: the model importing the interface that imports it is a cycle too.
    const typeOnly = `import type { Taken } from './strategy.ts';\nexport type T = Taken;\n`;
    expect(await boundaryErrors(typeOnly, 'server/checkpoint/model.ts')).toEqual(
      expect.arrayContaining([
        expect.stringContaining('import cycle within server/checkpoint: model.ts -> strategy.ts -> model.ts'),
      ]),
    );
  });

  it("lets the engine reach a strategy only through strategies.ts and the strategy folder's index.ts", async () => {
    expect(await boundaryErrors(importing('./walk/collect.ts'), 'server/checkpoint/assemble-delta.ts')).toEqual([
      expect.stringContaining('the engine knows a strategy only through strategy.ts'),
    ]);
    expect(await boundaryErrors(importing('./git-status/index.ts'), 'server/checkpoint/registry.ts')).toHaveLength(1);
    expect(await boundaryErrors(importing('./walk/capture.ts'), 'server/checkpoint/strategies.ts')).toHaveLength(1);
    expect(await boundaryErrors(importing('./walk/index.ts'), 'server/checkpoint/strategies.ts')).toEqual([]);
    expect(await boundaryErrors(importing('./strategy.ts'), 'server/checkpoint/registry.ts')).toEqual([]);
  });

  it('makes a new checkpoint strategy folder declare its place in the layer table', async () => {
    expect(await boundaryErrors(importing('../strategy.ts'), 'server/checkpoint/unplaced/probe.ts')).toEqual([
      expect.stringContaining('server/checkpoint/unplaced is not in the layer table'),
    ]);
  });

  it('makes a new server folder declare its place in the layer table', async () => {
    expect(await boundaryErrors(importing('../../shared/index.ts'), 'server/unplaced/probe.ts')).toEqual([
      expect.stringContaining('server/unplaced is not in the layer table'),
    ]);
  });
});
