import type { AgentSetupNotice } from '../../../shared/index.ts';
import { codexHookKeys, codexTrust, codexTrustProblem } from './codex-trust.ts';
import { below, readHookText } from './hook-file.ts';
import { parseObject } from './json-file.ts';
import { codexHooksFile, runsHookClient } from './targets.ts';

/**
 * What in the agents' setup under `home` keeps runs from being recorded, for the server to show
 * (`GET /api/agents/notices`): today Codex's hook trust, the one case where an agent with rundiff's
 * hooks installed records nothing and says nothing. Read each time it is asked (a person trusts the
 * hooks while the server runs); a file that cannot be read or parsed gives no notice here
 * (`rundiff hooks status` says what is wrong with it).
 */
export function agentSetupNotices(home: string): AgentSetupNotice[] {
  const hooks = codexHooksFile('user', { home, workspace: home });
  let text: string | null;
  try {
    text = readHookText(hooks);
  } catch {
    return [];
  }
  if (text === null) return [];
  let keys: string[];
  try {
    keys = codexHookKeys(hooks.file, parseObject(hooks.file, text), runsHookClient('codex'));
  } catch {
    return [];
  }
  const config = below(home, '.codex', 'config.toml');
  const problem = codexTrustProblem(codexTrust(config, keys));
  return problem
    ? [{ agent: 'codex', ...problem, file: problem.code === 'hooks_untrusted' ? hooks.file : config.file }]
    : [];
}
