import type { BridgeEvent } from '../../shared/index.ts';
import { createDemoWorkspace, pngBytes, type DemoWorkspace } from './workspace.ts';

/**
 * A scripted agent session played through the public bridge, as an external runtime would: user and
 * assistant messages, tool calls, and runs that add, modify, delete and rename files, change a binary,
 * exceed the row cap and the patch budget, fail, and one whose workspace is gone, so every kind of
 * row and state shows within a minute.
 */
export interface DemoOptions {
  send(event: BridgeEvent): Promise<unknown>;
  /** Pause between steps so the timeline visibly updates live (ms). Default 700. */
  pauseMs?: number;
  /** Called once the session exists (the UI can open it and watch). */
  onSession?(sessionId: string, workspace: string): void;
  log?(line: string): void;
}

export interface DemoResult {
  sessionId: string;
  workspace: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function locale(code: string): string {
  return (
    JSON.stringify(
      { locale: code, login: { title: `Sign in (${code})`, email: 'Email', submit: 'Continue' } },
      null,
      2,
    ) + '\n'
  );
}

function lockfile(): string {
  const lines = ['{', '  "name": "demo-shop",', '  "lockfileVersion": 3,', '  "packages": {'];
  for (let i = 0; i < 2600; i++) {
    lines.push(
      `    "node_modules/pkg-${i}": { "version": "1.${i % 17}.${i % 5}", "integrity": "sha512-${'x'.repeat(24)}${i}" },`,
    );
  }
  lines.push('    "": {}', '  }', '}');
  return lines.join('\n') + '\n';
}

function seedSql(n: number): string {
  const rows: string[] = [];
  for (let i = 0; i < 1700; i++)
    rows.push(`INSERT INTO products VALUES (${n * 10000 + i}, 'Product ${i} of batch ${n}', ${(i * 37) % 9000});`);
  return rows.join('\n') + '\n';
}

export async function playDemo(opts: DemoOptions): Promise<DemoResult> {
  const pause = () => sleep(opts.pauseMs ?? 700);
  const ws: DemoWorkspace = createDemoWorkspace();
  const sessionId = `demo-${Date.now().toString(36)}`;
  const s = { session_id: sessionId };
  const send = async (e: BridgeEvent) => {
    opts.log?.(`${e.type}${'run_id' in e ? ` ${e.run_id}` : ''}`);
    return opts.send(e);
  };

  await send({ type: 'session.upsert', ...s, title: 'Demo: a login form for the storefront', workspace: ws.dir });
  opts.onSession?.(sessionId, ws.dir);

  // Run 1: edits through tools: add, modify, rename with edits, delete, a binary change.
  await send({
    type: 'message',
    ...s,
    role: 'user',
    run_id: 'r1',
    content:
      'Add a login form with email validation, move the price helper to src/lib, drop the legacy login script and refresh the logo.',
  });
  await send({ type: 'run.started', ...s, run_id: 'r1', source: 'coding-agent' });
  await pause();
  await send({
    type: 'message',
    ...s,
    role: 'assistant',
    run_id: 'r1',
    message_id: 'r1-m1',
    content: 'Looking at the current login component…',
  });
  await send({ type: 'tool.started', ...s, run_id: 'r1', tool_call_id: 'r1-t1', name: 'edit_file' });
  ws.write(
    'src/Login.vue',
    `<script setup lang="ts">
import { computed, ref } from 'vue';
import { signIn } from './api/auth';

const email = ref('');
const valid = computed(() => /^[^@\\s]+@[^@\\s]+$/.test(email.value));
</script>

<template>
  <form class="login" @submit.prevent="signIn(email)">
    <input v-model="email" type="email" placeholder="Email" />
    <p v-if="email && !valid" class="error">Please enter a valid email address.</p>
    <button type="submit" :disabled="!valid">Sign in</button>
  </form>
</template>
`,
  );
  ws.write(
    'src/api/auth.ts',
    `export async function signIn(email: string): Promise<void> {
  const res = await fetch('/api/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  if (!res.ok) throw new Error(\`sign-in failed: \${res.status}\`);
}
`,
  );
  await pause();
  await send({
    type: 'message',
    ...s,
    role: 'tool',
    run_id: 'r1',
    tool_call_id: 'r1-t1',
    content: 'Edited src/Login.vue; created src/api/auth.ts',
  });
  await send({ type: 'tool.completed', ...s, run_id: 'r1', tool_call_id: 'r1-t1' });
  await send({
    type: 'message',
    ...s,
    role: 'assistant',
    run_id: 'r1',
    message_id: 'r1-m1',
    content: 'Looking at the current login component… added validation. Now moving the helper and cleaning up.',
  });
  await send({ type: 'tool.started', ...s, run_id: 'r1', tool_call_id: 'r1-t2', name: 'shell' });
  ws.rename('src/utils/format.ts', 'src/lib/format.ts');
  ws.remove('old/login.js');
  ws.write('assets/logo.png', pngBytes([220, 60, 60]));
  await pause();
  await send({
    type: 'message',
    ...s,
    role: 'tool',
    run_id: 'r1',
    tool_call_id: 'r1-t2',
    content: '$ git mv src/utils/format.ts src/lib/format.ts && rm old/login.js && ./scripts/logo.sh',
  });
  await send({ type: 'tool.completed', ...s, run_id: 'r1', tool_call_id: 'r1-t2' });
  await send({
    type: 'message',
    ...s,
    role: 'assistant',
    run_id: 'r1',
    content:
      'Done. The login form now validates the email before it can be submitted:\n\n```ts\nconst valid = computed(() => /^[^@\\s]+@[^@\\s]+$/.test(email.value));\n```\n\nThe formatting helpers moved to `src/lib/format.ts`; the legacy `old/login.js` is gone and the logo is red.',
  });
  await send({ type: 'run.completed', ...s, run_id: 'r1' });
  await pause();

  // Run 2: more files than a summary's first page, a file over the per-file patch cap, more than the run budget.
  await send({
    type: 'message',
    ...s,
    role: 'user',
    run_id: 'r2',
    content: 'Generate login translations for every locale, regenerate the lock file and add seed data.',
  });
  await send({ type: 'run.started', ...s, run_id: 'r2', source: 'coding-agent' });
  await pause();
  const codes = [
    'ar',
    'bg',
    'bn',
    'ca',
    'cs',
    'da',
    'de',
    'el',
    'en',
    'es',
    'et',
    'fa',
    'fi',
    'fr',
    'ga',
    'gl',
    'he',
    'hi',
    'hr',
    'hu',
    'hy',
    'id',
    'is',
    'it',
    'ja',
    'ka',
    'kk',
    'km',
    'ko',
    'lt',
    'lv',
    'mk',
    'ml',
    'mn',
    'ms',
    'mt',
    'nb',
    'ne',
    'nl',
    'pa',
    'pl',
    'pt',
    'ro',
    'ru',
    'sk',
    'sl',
    'sq',
    'sr',
    'sv',
    'sw',
    'ta',
    'te',
    'th',
    'tr',
    'uk',
    'ur',
    'uz',
    'vi',
    'zh',
    'zu',
  ];
  for (const code of codes) ws.write(`src/locales/${code}.json`, locale(code));
  ws.write('package-lock.json', lockfile());
  for (let n = 1; n <= 5; n++) ws.write(`seeds/seed-${n}.sql`, seedSql(n));
  await send({
    type: 'message',
    ...s,
    role: 'assistant',
    run_id: 'r2',
    content: `Added ${codes.length} locale files, regenerated \`package-lock.json\` and wrote five seed files.`,
  });
  await send({ type: 'run.completed', ...s, run_id: 'r2' });
  await pause();

  // Run 3: a failing run that still changed a file.
  await send({ type: 'message', ...s, role: 'user', run_id: 'r3', content: 'Deploy it to production.' });
  await send({ type: 'run.started', ...s, run_id: 'r3', source: 'coding-agent' });
  await send({ type: 'tool.started', ...s, run_id: 'r3', tool_call_id: 'r3-t1', name: 'shell' });
  ws.write(
    'README.md',
    '# Demo shop\n\nA small storefront the demo agent works on.\n\nDeploy: `npm run deploy` (needs production credentials).\n',
  );
  await pause();
  await send({
    type: 'message',
    ...s,
    role: 'tool',
    run_id: 'r3',
    tool_call_id: 'r3-t1',
    content: '$ npm run deploy\nError: permission denied (no production credentials)',
  });
  await send({ type: 'tool.completed', ...s, run_id: 'r3', tool_call_id: 'r3-t1', error: 'exit 1' });
  await send({
    type: 'message',
    ...s,
    role: 'assistant',
    run_id: 'r3',
    content:
      'The deploy failed: this machine has no production credentials. I documented the deploy step in the README.',
  });
  await send({ type: 'run.failed', ...s, run_id: 'r3', error: 'deploy script exited with code 1' });
  await pause();

  // Run 4: a run whose workspace is gone: recorded, but not tracked, and the UI says why.
  await send({ type: 'message', ...s, role: 'user', run_id: 'r4', content: 'Check the staging checkout too.' });
  await send({ type: 'run.started', ...s, run_id: 'r4', workspace: `${ws.dir}-staging-does-not-exist` });
  await send({
    type: 'message',
    ...s,
    role: 'assistant',
    run_id: 'r4',
    content: 'The staging checkout is not on this machine, so there is nothing to inspect.',
  });
  await send({ type: 'run.completed', ...s, run_id: 'r4' });

  return { sessionId, workspace: ws.dir };
}
