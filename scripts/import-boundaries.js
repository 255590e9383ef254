// ESLint rule `rundiff/import-boundaries`: the direction of imports between the parts of the
// repository, so a wrong-way import fails `npm run lint` (and so `npm test`) instead of waiting for a
// review. Plain JS so eslint.config.js loads it without a TypeScript loader.
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Building blocks of the table below, from the bottom up.
/** Imported by nearly everything on the server; they import only `shared/`. */
const BASE = ['shared', 'server/errors.ts', 'server/config.ts', 'server/version.ts', 'server/package-root.ts'];
/** Checkpoints, deltas, git, workspaces and the two leaves below them. */
const ENGINE = [
  'server/checkpoint',
  'server/delta',
  'server/blame',
  'server/git',
  'server/workspace',
  'server/fs',
  'server/paths',
  'server/watch',
];
const STORAGE = ['server/store', 'server/tools-log', 'server/approvals'];
/** What the checkpoint engine and each of its parts may import from outside server/checkpoint/. */
const CHECKPOINT_BELOW = [
  ...BASE,
  'server/workspace',
  'server/git',
  'server/delta',
  'server/fs',
  'server/paths',
  'server/watch',
];
/** What a checkpoint strategy may import: the model, the interface, the leaf helpers; never another strategy. */
const STRATEGY = [
  ...CHECKPOINT_BELOW,
  'server/checkpoint/model.ts',
  'server/checkpoint/strategy.ts',
  'server/checkpoint/common',
  'server/checkpoint/watch',
];
const RUNS = [
  'server/runs',
  'server/run-changes',
  'server/live',
  'server/hooks',
  'server/revert',
  'server/net-change',
  'server/review',
];

/**
 * What each part may import (besides its own files and npm packages). A key is a folder or a single
 * file, relative to the repository root; a file belongs to the longest key that contains it. The
 * direction: cli/api/socket -> runs -> checkpoint/delta/store/git/workspace -> leaves (fs, paths,
 * security, errors, config); web/ imports only shared/; shared/ imports nothing. A folder on the
 * server that is missing here is an error, so a new folder states its place when it is added.
 */
export const MAY_IMPORT = {
  shared: [],
  web: ['shared'],

  // Leaves. package-root finds the files the package ships beside its code (UI, migrations, hook client).
  'server/package-root.ts': [],
  'server/version.ts': ['server/package-root.ts'],
  'server/errors.ts': ['shared'],
  'server/config.ts': ['shared', 'server/errors.ts'],
  'server/paths': [],
  'server/fs': ['server/paths'],
  // Folder watches (one inotify watch per folder, opened through a checked descriptor) and their budget.
  'server/watch': ['server/fs', 'server/paths'],
  'server/security': ['server/errors.ts'],
  'server/bridge-client': ['shared'],
  'server/demo': ['shared'],

  // Engine and storage, each folder below the next: delta <- git <- workspace <- checkpoint.
  'server/delta': ['shared', 'server/paths'],
  // Provenance: pure line attribution carried forward by line diffs (no I/O).
  'server/blame': [],
  'server/git': [...BASE, 'server/delta', 'server/fs', 'server/paths'],
  'server/workspace': [...BASE, 'server/git', 'server/fs', 'server/paths'],
  // The checkpoint engine (registry, start, completion) over its strategies: each strategy is a folder
  // behind strategy.ts, listed in strategies.ts; the model is data, common/ the leaf both use.
  'server/checkpoint': CHECKPOINT_BELOW,
  'server/checkpoint/model.ts': ['shared', 'server/paths'],
  'server/checkpoint/strategy.ts': [...CHECKPOINT_BELOW, 'server/checkpoint/model.ts', 'server/checkpoint/watch'],
  // The checkpoint watchers: what changed since the last sync point, when they can vouch for it.
  'server/checkpoint/watch': CHECKPOINT_BELOW,
  'server/checkpoint/common': [...CHECKPOINT_BELOW, 'server/checkpoint/model.ts'],
  'server/checkpoint/git-status': STRATEGY,
  'server/checkpoint/walk': STRATEGY,
  // The store's executor, dialects and write clock: a leaf under the modules written over it.
  'server/store/sql': [],
  'server/store': [...BASE, 'server/store/sql'],
  'server/approvals': BASE,
  'server/tools-log': [...BASE, 'server/store'],

  // Runs: the recorder between the edges and the engine.
  'server/runs': [...BASE, ...ENGINE, ...STORAGE],
  'server/run-changes': [...BASE, ...ENGINE, ...STORAGE, 'server/runs'],
  'server/live': [...BASE, ...ENGINE, 'server/runs'],
  // Undoing a stored change: plans from kept contents (a hunk from the file's patch computed again
  // from them, by net-change/), writes through fs/, records the revert as a run.
  'server/revert': [...BASE, ...ENGINE, ...STORAGE, 'server/runs', 'server/net-change'],
  // A session's net change over a range of runs, from the stored rows and kept contents.
  'server/net-change': [...BASE, ...ENGINE, ...STORAGE],
  // Review comments on a change's lines and their delivery to the agent, from the stored rows.
  'server/review': [...BASE, ...STORAGE, 'server/paths', 'server/runs'],
  // Agent hooks: pure per-agent mappings of hook payloads to bridge events, and their session state;
  // the agent's own transcript read (bounded, never through a link) for what a run cost.
  'server/hooks': [...BASE, 'server/fs', 'server/paths', 'server/runs'],
  'server/jobs': [...BASE, ...ENGINE, ...STORAGE, ...RUNS],
  // Edge to centre: the edge's shipper (outbox to HTTP) and the centre's batch validation and ingest.
  'server/edge': [...BASE, ...STORAGE, 'server/runs'],

  // Edges: none imports another.
  'server/api': [
    ...BASE,
    ...ENGINE,
    ...STORAGE,
    ...RUNS,
    'server/security',
    'server/bridge-client',
    'server/demo',
    'server/edge',
  ],
  'server/socket': [...BASE, ...ENGINE, ...STORAGE, ...RUNS, 'server/security'],
  'server/cli': [
    ...BASE,
    ...ENGINE,
    ...STORAGE,
    ...RUNS,
    'server/bridge-client',
    'server/demo',
    'server/main.ts',
    'server/index.ts',
  ],

  // Composition roots: the server (`main.ts`) and the package's in-process API (`index.ts`).
  'server/main.ts': [
    ...BASE,
    ...ENGINE,
    ...STORAGE,
    ...RUNS,
    'server/jobs',
    'server/security',
    'server/api',
    'server/socket',
    'server/edge',
  ],
  'server/index.ts': [...BASE, ...ENGINE, ...STORAGE, ...RUNS, 'server/jobs', 'server/main.ts'],
};

/** The strategy folders, and the one file of the engine that lists them (through their index.ts). */
const STRATEGY_FOLDERS = Object.keys(MAY_IMPORT).filter((k) => MAY_IMPORT[k] === STRATEGY);
const STRATEGY_LIST = 'server/checkpoint/strategies.ts';

/** Folders each of whose sub-folders must have its own entry above (a new strategy states its place). */
const SPLIT = ['server/checkpoint'];

/**
 * Folders whose production files import each other without a cycle, type-only imports included
 * (a cycle is a module that cannot be understood, tested or moved alone).
 */
export const ACYCLIC = ['server/checkpoint'];

/** Tests (next to the code, and the helpers in server/test-support/) may reach across layers. */
const TEST_MAY_IMPORT = {
  server: ['server', 'shared'],
  web: ['web', 'shared'],
  shared: ['shared'],
};

/** Modules that do I/O: `delta/` is pure (it is handed a reader), so it imports none of them. */
const IO_MODULES = new Set([
  'fs',
  'fs/promises',
  'child_process',
  'net',
  'http',
  'https',
  'http2',
  'dgram',
  'dns',
  'tls',
  'worker_threads',
  'cluster',
  'readline',
  'better-sqlite3',
  'chokidar',
  'express',
  'socket.io',
  'socket.io-client',
]);
const BUILTINS = new Set(builtinModules);

const isTest = (rel) => /\.test\.ts$/.test(rel) || rel.startsWith('server/test-support/');

/** The key of MAY_IMPORT a repository path belongs to, or null. */
function areaOf(rel) {
  let best = null;
  for (const key of Object.keys(MAY_IMPORT)) {
    if ((rel === key || rel.startsWith(key + '/')) && (best === null || key.length > best.length)) best = key;
  }
  return best;
}

const within = (rel, keys) => keys.some((k) => rel === k || rel.startsWith(k + '/'));

/** Repository path of an import, or null for a package (or a path outside the repository). */
function targetOf(spec, filename) {
  if (spec === 'rundiff') return 'server/index.ts';
  if (spec === 'rundiff/shared') return 'shared/index.ts';
  if (!spec.startsWith('.') && !spec.startsWith('/')) return null;
  const rel = path
    .relative(ROOT, path.resolve(path.dirname(filename), spec))
    .split(path.sep)
    .join('/');
  return rel.startsWith('..') || rel.startsWith('node_modules/') ? null : rel;
}

function packageName(spec) {
  const bare = spec.startsWith('node:') ? spec.slice(5) : spec;
  const parts = bare.split('/');
  return bare.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0] === 'fs' && parts[1] ? bare : parts[0];
}

/** Block comments and whole-line comments, which may mention an import that is not one. */
const COMMENTS = /\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm;
/** Static imports and re-exports (`... from '...'`, `import '...'`) and dynamic `import('...')`. */
const IMPORTS =
  /(?:^|[\s;])(?:import|export)\s+(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Repository paths a production file on disk imports (read once per version of the file). */
const importsOnDisk = new Map();
function diskImports(rel) {
  const abs = path.join(ROOT, rel);
  let stat;
  try {
    stat = fs.statSync(abs);
  } catch {
    return [];
  }
  const hit = importsOnDisk.get(rel);
  if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit.targets;
  const text = fs.readFileSync(abs, 'utf8').replace(COMMENTS, '');
  const targets = [];
  for (const m of text.matchAll(IMPORTS)) {
    const to = targetOf(m[1] ?? m[2], abs);
    if (to !== null) targets.push(to);
  }
  importsOnDisk.set(rel, { mtimeMs: stat.mtimeMs, size: stat.size, targets });
  return targets;
}

/**
 * The chain of files from `start` back to `file` inside `folder` (production files only), or null.
 * `file`'s own imports are the ones being linted; every other file's are read from disk.
 */
function cycleThrough(file, start, folder) {
  const inside = (to) => within(to, [folder]) && !isTest(to);
  const seen = new Set();
  const walk = (at) => {
    if (at === file) return [at];
    if (seen.has(at)) return null;
    seen.add(at);
    for (const next of diskImports(at)) {
      if (!inside(next)) continue;
      const rest = walk(next);
      if (rest) return [at, ...rest];
    }
    return null;
  };
  return inside(start) ? walk(start) : null;
}

/** @type {import('eslint').Rule.RuleModule} */
export const importBoundaries = {
  meta: {
    type: 'problem',
    docs: { description: 'imports follow the layers of the repository (see MAY_IMPORT)' },
    schema: [],
    messages: {
      wrongWay: '{{from}} may not import {{to}} ({{from}} may import: {{allowed}})',
      testCode: 'production code may not import test code ({{to}})',
      unknownArea: '{{from}} is not in the layer table of scripts/import-boundaries.js: add it with what it may import',
      ioInDelta: 'delta/ does no I/O: it may not import {{to}} (it is handed a reader)',
      noPackages: 'shared/ holds types and constants only: it may not import the package {{to}}',
      nodeInWeb: 'web/ runs in the browser: it may not import the Node module {{to}}',
      strategyInside:
        '{{from}} may not import {{to}}: the engine knows a strategy only through strategy.ts, and strategies.ts lists each by its index.ts',
      cycle: 'import cycle within {{folder}}: {{chain}} (its files import each other one way only)',
    },
  },
  create(context) {
    const rel = path.relative(ROOT, context.filename).split(path.sep).join('/');
    const top = rel.split('/')[0];
    if (rel.startsWith('..') || !['server', 'shared', 'web'].includes(top)) return {};
    const test = isTest(rel);
    const from = areaOf(rel);

    function check(node, spec) {
      if (typeof spec !== 'string') return;
      const to = targetOf(spec, context.filename);
      if (to === null) {
        if (test) return;
        const name = packageName(spec);
        if (from === 'server/delta' && IO_MODULES.has(name))
          context.report({ node, messageId: 'ioInDelta', data: { to: spec } });
        else if (from === 'shared') context.report({ node, messageId: 'noPackages', data: { to: spec } });
        else if (from === 'web' && (spec.startsWith('node:') || BUILTINS.has(name)))
          context.report({ node, messageId: 'nodeInWeb', data: { to: spec } });
        return;
      }
      if (test) {
        if (!within(to, TEST_MAY_IMPORT[top])) {
          context.report({
            node,
            messageId: 'wrongWay',
            data: { from: rel, to, allowed: TEST_MAY_IMPORT[top].join(', ') },
          });
        }
        return;
      }
      if (isTest(to)) return context.report({ node, messageId: 'testCode', data: { to } });
      const strategy = STRATEGY_FOLDERS.find((k) => within(to, [k]));
      // The rest of the server reaches a strategy only as strategies.ts lists it (by its index.ts);
      // where the table refuses the import already, that is the one error.
      const tableAllows = from !== null && (within(to, [from]) || within(to, MAY_IMPORT[from]));
      if (
        strategy &&
        tableAllows &&
        !within(rel, [strategy]) &&
        !(rel === STRATEGY_LIST && to === `${strategy}/index.ts`)
      )
        context.report({ node, messageId: 'strategyInside', data: { from: rel, to } });
      const acyclic = ACYCLIC.find((k) => within(rel, [k]));
      if (acyclic) {
        const chain = cycleThrough(rel, to, acyclic);
        if (chain) {
          const short = (p) => p.slice(acyclic.length + 1);
          const names = [rel, ...chain].map(short).join(' -> ');
          context.report({ node, messageId: 'cycle', data: { folder: acyclic, chain: names } });
        }
      }
      if (from === null || within(to, [from])) return; // an unknown area is reported once, below
      const toTop = to.split('/')[0];
      if (!['server', 'shared', 'web', 'e2e', 'bench', 'scripts', 'bin'].includes(toTop)) return; // package.json
      const allowed = MAY_IMPORT[from];
      if (!within(to, allowed)) {
        context.report({
          node,
          messageId: 'wrongWay',
          data: { from, to: areaOf(to) ?? to, allowed: allowed.length ? allowed.join(', ') : 'nothing' },
        });
      }
    }

    return {
      Program(node) {
        if (!test && from === null && top === 'server')
          context.report({ node, messageId: 'unknownArea', data: { from: rel.split('/').slice(0, 2).join('/') } });
        const split = SPLIT.find((k) => from === k && rel.startsWith(k + '/') && rel.slice(k.length + 1).includes('/'));
        if (!test && split)
          context.report({
            node,
            messageId: 'unknownArea',
            data: { from: `${split}/${rel.slice(split.length + 1).split('/')[0]}` },
          });
      },
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};

export default { rules: { 'import-boundaries': importBoundaries } };
