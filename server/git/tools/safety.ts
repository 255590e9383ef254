import { filterOverrides } from '../repo.ts';
import type { GitConfigPair } from '../runner.ts';

/**
 * What every tool passes to git on top of the runner's hardening, so that nothing a repository
 * configured runs and the output keeps the one format the parsers read.
 */

/** Config overrides for reading: signatures are not verified (that would run `gpg.program`), prefixes and paths stay standard. */
export const READ_CONFIG: readonly GitConfigPair[] = Object.freeze([
  ['log.showSignature', 'false'],
  ['diff.noprefix', 'false'],
  ['diff.mnemonicPrefix', 'false'],
  ['diff.relative', 'false'],
  ['diff.submodule', 'short'],
  ['status.submoduleSummary', 'false'],
  ['i18n.logOutputEncoding', 'UTF-8'],
] as const);

/** Flags of every diff the tools run: no external diff or textconv driver, full object ids, 3 lines of context. */
export const DIFF_FLAGS: readonly string[] = Object.freeze([
  '--no-ext-diff',
  '--no-textconv',
  '--no-color',
  '--full-index',
  '-M',
  '-U3',
  '--inter-hunk-context=0',
  '--src-prefix=a/',
  '--dst-prefix=b/',
  '--no-relative',
  '--submodule=short',
  // Looking inside a submodule's work tree would run git there, under that repository's own config.
  '--ignore-submodules=dirty',
]);

export interface RepoSafety {
  /** Config overrides: READ_CONFIG plus every filter driver of the repository emptied. */
  config: GitConfigPair[];
  /** Filter drivers the repository's config defines (they are never run). */
  drivers: string[];
}

/** The overrides for one repository; commands that read the work tree through git must use them. */
export async function repoSafety(top: string): Promise<RepoSafety> {
  const filters = await filterOverrides(top);
  return { config: [...READ_CONFIG, ...filters.config], drivers: filters.drivers };
}
