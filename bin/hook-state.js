// The hook client's state folder (the data folder: the autostarted server's log, pid file and start
// lock). It is checked once and opened once: every file in it is then reached through that one
// descriptor (Linux's /proc/self/fd/N/<name>), never by the folder's name again, so a folder swapped
// for a symlink after the check leads nowhere new. Plain JavaScript on Node's built-ins only (the
// hook client loads it on every start that finds no server).
import fs from 'node:fs';

/** A start another hook began this recently is waited for rather than repeated. */
const START_LOCK_FRESH_MS = 30_000;

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_APPEND, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = fs.constants;
/** Never through a symlink, never blocked on a FIFO planted at the name. */
const STATE_OPEN = O_WRONLY | (O_NOFOLLOW ?? 0) | (O_NONBLOCK ?? 0);
/** The folder itself: opened only when it is a folder, never through a symlink at its name. */
const DIR_OPEN = O_RDONLY | (O_DIRECTORY ?? 0) | (O_NOFOLLOW ?? 0);
const HAS_PROC_FD = (() => {
  try {
    return fs.statSync('/proc/self/fd').isDirectory();
  } catch {
    return false;
  }
})();
const ownUid = typeof process.getuid === 'function' ? process.getuid() : null;
const isOwn = (st) => ownUid === null || st.uid === ownUid;
/** A state file the client may write: a regular file of the user's, with no other name (hard link). */
const isOwnFile = (st) => st.isFile() && st.nlink === 1 && isOwn(st);
const kindOf = (st) =>
  st.isSymbolicLink() ? 'a symlink' : st.isFile() ? (st.nlink > 1 ? 'a hard link' : 'a file') : 'not a regular file';

function lstatOrNull(file) {
  try {
    return fs.lstatSync(file);
  } catch {
    return null;
  }
}

/**
 * The state folder `dir`, created if missing, opened when the client may keep its state there: a
 * real folder (not a symlink to another), the user's own, that other users cannot write into. The
 * checks read the opened folder itself. Resolves {dir, at(name), close()} or an Error saying why not.
 * Folders above `dir` may be links (a dotfiles setup); only `dir` itself is pinned: through its
 * descriptor where /proc/self/fd exists, else (`pin: 'cwd'`) by making it the process's working
 * folder, kept only when the folder entered is the one opened (the hook client is a process of its
 * own that names no other relative path), its names then given relative to it.
 */
export function openStateDir(dir, { pin = HAS_PROC_FD ? 'proc' : 'cwd' } = {}) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  let fd;
  try {
    fd = fs.openSync(dir, DIR_OPEN);
  } catch (err) {
    const st = lstatOrNull(dir);
    if (st?.isSymbolicLink()) return new Error(`${dir} is a symlink; the hook keeps its state only in a real folder`);
    if (st !== null && !st.isDirectory()) return new Error(`${dir} is not a folder`);
    return err instanceof Error ? err : new Error(String(err));
  }
  const st = fs.fstatSync(fd);
  const why = !st.isDirectory()
    ? `${dir} is not a folder`
    : !isOwn(st)
      ? `${dir} belongs to another user`
      : (st.mode & 0o002) !== 0
        ? `${dir} is writable by other users`
        : null;
  if (why !== null) {
    fs.closeSync(fd);
    return new Error(why);
  }
  if (pin === 'cwd') {
    let entered = null;
    try {
      process.chdir(dir);
      entered = fs.statSync('.');
    } catch {
      // not entered: refused below
    }
    if (entered === null || entered.dev !== st.dev || entered.ino !== st.ino) {
      fs.closeSync(fd);
      return new Error(`${dir} was replaced while it was opened`);
    }
  }
  return {
    dir,
    at: (name) => (pin === 'cwd' ? `./${name}` : `/proc/self/fd/${fd}/${name}`),
    close: () => fs.closeSync(fd),
  };
}

/**
 * Creates `name` in the state folder, exclusively and without following a link. Whatever else sits
 * at that name (a planted symlink or hard link, a FIFO, a stale file) loses its name first: only
 * the name is removed, never what it points to. Resolves {fd, replaced} (what was there, or null).
 */
function createStateFile(state, name, extraFlags = 0) {
  const file = state.at(name);
  const st = lstatOrNull(file);
  if (st !== null) fs.unlinkSync(file); // a folder at the name throws: nothing is written then
  const fd = fs.openSync(file, STATE_OPEN | O_CREAT | O_EXCL | extraFlags, 0o600);
  return { fd, replaced: st === null ? null : kindOf(st) };
}

/** The server log, opened for appending: the existing one when it is the user's plain file. */
export function openLog(state) {
  try {
    const fd = fs.openSync(state.at('server.log'), STATE_OPEN | O_APPEND);
    if (isOwnFile(fs.fstatSync(fd))) return { fd, replaced: null };
    fs.closeSync(fd);
  } catch {
    // missing, a symlink (refused by O_NOFOLLOW) or a FIFO without a reader: created afresh below
  }
  return createStateFile(state, 'server.log', O_APPEND);
}

/**
 * Takes the start lock (`server.starting`, created exclusively): true when taken, false when
 * another hook holds a fresh one. A stale lock, or anything but the user's plain file at its name,
 * is replaced.
 */
export function takeStartLock(state) {
  const lock = state.at('server.starting');
  try {
    fs.closeSync(fs.openSync(lock, STATE_OPEN | O_CREAT | O_EXCL, 0o600));
    return true;
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
  }
  const st = lstatOrNull(lock);
  if (st !== null && isOwnFile(st) && Date.now() - st.mtimeMs < START_LOCK_FRESH_MS) return false;
  const { fd } = createStateFile(state, 'server.starting');
  fs.closeSync(fd);
  return true;
}

/** Gives the start lock back (the start is over, or did not happen). */
export function releaseStartLock(state) {
  fs.rmSync(state.at('server.starting'), { force: true });
}

/** Writes the pid file whole through a fresh file renamed over the name (a rename replaces a link, never its target). */
export function writePidFile(state, pid) {
  const tmp = `server.pid.${process.pid}.tmp`;
  const { fd } = createStateFile(state, tmp);
  try {
    fs.writeSync(fd, `${pid}\n`);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(state.at(tmp), state.at('server.pid'));
  } catch (err) {
    fs.rmSync(state.at(tmp), { force: true });
    throw err;
  }
}
