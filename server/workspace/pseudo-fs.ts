import fs from 'node:fs';
import path from 'node:path';
import { isInside } from '../paths/index.ts';

/**
 * Kernel and device file systems are never workspaces: their "files" are interfaces (reading
 * /proc/kmsg waits for the next kernel message, a device node may wait forever, a sysfs tree has
 * tens of thousands of entries that change by themselves), so a walk of them can hang the scan or
 * report noise. tmpfs is a normal place for projects and is allowed; devtmpfs (the /dev tree)
 * shares tmpfs's statfs magic, so mount names decide where the mount table can be read.
 */

/** statfs f_type magic numbers of the refused file systems (from the kernel's magic list). */
const PSEUDO_MAGIC = new Map<number, string>([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x6165676c, 'pstore'],
  [0xcafe4a11, 'bpf'],
  [0x62656570, 'configfs'],
  [0x65735543, 'fusectl'],
  [0x19800202, 'mqueue'],
  [0x958458f6, 'hugetlbfs'],
  [0xde5e81e4, 'efivarfs'],
  [0x42494e4d, 'binfmt_misc'],
  [0x6e736673, 'nsfs'],
  [0xf97cff8c, 'selinuxfs'],
]);

/** Mount-table type names of the refused file systems (devtmpfs has no magic of its own). */
const PSEUDO_NAMES = new Set<string>([...PSEUDO_MAGIC.values(), 'devtmpfs', 'autofs', 'rpc_pipefs']);

/** The refused file system a statfs magic number or a mount type name stands for, or null. */
export function pseudoFsName(magic: number | null, mountType: string | null): string | null {
  if (mountType !== null && PSEUDO_NAMES.has(mountType)) return mountType;
  if (magic !== null) return PSEUDO_MAGIC.get(magic) ?? null;
  return null;
}

export interface Mount {
  mountPoint: string;
  fsType: string;
}

/** Mount points in mountinfo escape space, tab, newline and backslash as octal. */
const unescapeMount = (s: string): string =>
  s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/** Parses /proc/self/mountinfo text: field 5 is the mount point, the first field after " - " the type. */
export function parseMountInfo(text: string): Mount[] {
  const out: Mount[] = [];
  for (const line of text.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const head = line.slice(0, sep).split(' ');
    const fsType = line.slice(sep + 3).split(' ')[0];
    if (head.length < 5 || !fsType) continue;
    out.push({ mountPoint: unescapeMount(head[4]!), fsType });
  }
  return out;
}

function readMounts(): Mount[] {
  try {
    return parseMountInfo(fs.readFileSync('/proc/self/mountinfo', 'utf8'));
  } catch {
    return []; // no /proc (or not Linux): the statfs magic of the folder and its parents still decides
  }
}

/**
 * Why the real folder `real` lies on or below a kernel or device file system, naming it, or null.
 * Checks the folder and each parent (a tmpfs mounted inside /sys is still inside /sys), by statfs
 * magic and by the mount table.
 */
export function pseudoFsRefusal(real: string, mounts: Mount[] = readMounts()): string | null {
  for (const m of mounts) {
    if (m.mountPoint === '/' || !isInside(m.mountPoint, real)) continue;
    const name = pseudoFsName(null, m.fsType);
    if (name) return `${real} is on a ${name} file system (${m.mountPoint}), which is never tracked`;
  }
  for (let p = real; ; p = path.dirname(p)) {
    let magic: number | null = null;
    try {
      magic = Number(fs.statfsSync(p).type);
    } catch {
      magic = null;
    }
    const name = pseudoFsName(magic, null);
    if (name) return `${real} is on a ${name} file system (${p}), which is never tracked`;
    if (p === path.dirname(p)) return null;
  }
}

/**
 * Kernel and device file systems mounted below `root` (a container's root folder holding its own
 * /proc, say), as paths relative to it: the walk never enters them.
 */
export function pseudoMountsBelow(root: string, mounts: Mount[] = readMounts()): string[] {
  const out: string[] = [];
  for (const m of mounts) {
    if (m.mountPoint === root || !isInside(root, m.mountPoint)) continue;
    if (pseudoFsName(null, m.fsType)) out.push(path.relative(root, m.mountPoint));
  }
  return out.sort();
}
