import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';

/** A small web app in a fresh temporary git repository: the demo agent's workspace. */
export interface DemoWorkspace {
  dir: string;
  write(rel: string, content: string | Buffer): void;
  remove(rel: string): void;
  rename(from: string, to: string): void;
}

const LOGIN_VUE = `<script setup lang="ts">
import { ref } from 'vue';

const email = ref('');
</script>

<template>
  <form class="login">
    <input v-model="email" type="email" placeholder="Email" />
    <button type="submit">Sign in</button>
  </form>
</template>
`;

/** The helpers the demo agent moves to src/lib. */
const FORMAT_TS = `/** Formatting helpers shared by the storefront pages. */

export function price(cents: number): string {
  return \`$\${(cents / 100).toFixed(2)}\`;
}

export function percent(ratio: number): string {
  return \`\${Math.round(ratio * 100)}%\`;
}

export function plural(count: number, word: string): string {
  return \`\${count} \${word}\${count === 1 ? '' : 's'}\`;
}

export function shortDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
`;

const LEGACY_LOGIN = Array.from({ length: 22 }, (_, i) => `// legacy login helper, line ${i + 1}`).join('\n') + '\n';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A real 8x8 PNG of one colour: the demo changes its colour to show a `binary changed` row. */
export function pngBytes(rgb: [number, number, number]): Buffer {
  const size = 8;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: size }, () => row));
  return Buffer.concat([
    Buffer.from('89504e470d0a1a0a', 'hex'),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export function createDemoWorkspace(): DemoWorkspace {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rundiff-demo-')));
  const write = (rel: string, content: string | Buffer) => {
    const abs = path.join(dir, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  };
  write('README.md', '# Demo shop\n\nA small storefront the demo agent works on.\n');
  write('src/Login.vue', LOGIN_VUE);
  write('src/utils/format.ts', FORMAT_TS);
  write('old/login.js', LEGACY_LOGIN);
  write('assets/logo.png', pngBytes([40, 90, 200]));
  write('.gitignore', 'node_modules/\ndist/\n');
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: dir,
      stdio: 'ignore',
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: dir,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_AUTHOR_NAME: 'Demo',
        GIT_AUTHOR_EMAIL: 'demo@example.invalid',
        GIT_COMMITTER_NAME: 'Demo',
        GIT_COMMITTER_EMAIL: 'demo@example.invalid',
      },
    });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'Initial storefront');
  return {
    dir,
    write,
    remove: (rel) => fs.rmSync(path.join(dir, rel), { force: true }),
    rename: (from, to) => {
      fs.mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
      fs.renameSync(path.join(dir, from), path.join(dir, to));
    },
  };
}
