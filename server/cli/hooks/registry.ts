import type { HookAgent } from '../../hooks/index.ts';
import { copilotTarget, cursorTarget, geminiTarget } from './agent-targets.ts';
import { clineTarget, hermesTarget, type FilesTarget } from './file-targets.ts';
import { opencodeTarget } from './opencode-plugin.ts';
import { INSTALL_TARGETS, type InstallTarget } from './targets.ts';

/**
 * Every agent's installer (one line per agent). Kept apart from `targets.ts` so that the agents'
 * target modules, which build on it, are not imported by it: a module cycle leaves a module's
 * helpers unset while the other runs its top level, which the TypeScript loader does not survive.
 */
export const ALL_INSTALL_TARGETS: Partial<Record<HookAgent, InstallTarget | FilesTarget>> = {
  ...INSTALL_TARGETS,
  gemini: geminiTarget,
  cursor: cursorTarget,
  copilot: copilotTarget,
  opencode: opencodeTarget,
  cline: clineTarget,
  hermes: hermesTarget,
};
