/**
 * Test fixture: the real Gemini CLI (installed by `scripts/ensure-agent-cli.sh gemini`), run
 * offline with `gemini -p PROMPT --yolo` against a scripted Gemini API model (see
 * scripted-gemini.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { runAgentCli, type AgentRun } from './agent-cli.ts';

/** The version the agent tests were written and checked against. */
export const GEMINI_VERSION = '0.61.0';

/** The model the scripted server answers as. */
export const GEMINI_MODEL = 'gemini-2.5-pro';

export interface GeminiOptions {
  bin: string;
  cwd: string;
  /** A temp folder: Gemini keeps its sessions and user settings under HOME. */
  home: string;
  /** The scripted model's URL. */
  modelUrl: string;
  /** Continue the last session (`--resume latest`). */
  resume?: boolean;
}

/**
 * The user settings Gemini needs to run here: API-key auth (else "Invalid auth method selected")
 * and the workspace trusted (else `--yolo` is turned off and project hooks do not load).
 */
export function prepareGeminiHome(home: string, workspace: string): void {
  const dir = path.join(home, '.gemini');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: true } } }),
  );
  fs.writeFileSync(path.join(dir, 'trustedFolders.json'), JSON.stringify({ [workspace]: 'TRUST_FOLDER' }));
}

/** `gemini -p PROMPT --yolo [--resume latest]`, stdin closed. */
export function runGemini(prompt: string, opts: GeminiOptions): Promise<AgentRun> {
  // A named model: with the default ("auto") Gemini first asks a router model for JSON, and retries
  // with backoff for about 100 s when a scripted side answer is not that JSON.
  const args = [opts.bin, '-p', prompt, '--yolo', '-m', GEMINI_MODEL, ...(opts.resume ? ['--resume', 'latest'] : [])];
  return runAgentCli(process.execPath, args, opts.cwd, {
    HOME: opts.home,
    GEMINI_API_KEY: 'offline-test-key',
    GOOGLE_GEMINI_BASE_URL: opts.modelUrl,
  });
}
