/**
 * @module data-lock — one process per data directory: a lock held by the kernel for its owner and
 * released when the owner dies (however it dies), with a `lock` file beside it naming the holder.
 *
 * The lock is a Unix socket bound in Linux's abstract namespace under a name derived from the
 * directory's device and inode numbers: the same name whatever path reaches the directory (a
 * symbolic link, `..`, a bind mount, where a real path would differ). Binding a name is atomic and exclusive; the name disappears
 * with the last descriptor on it, which the kernel closes when the process exits, kill -9
 * included, so a stale lock cannot exist. Node has no flock(2), and a pid file alone is racy and
 * goes stale. Elsewhere than Linux (no abstract namespace) the socket is a file, `lock.sock`, in
 * the data directory; one nobody accepts on is a leftover and is replaced.
 *
 * The abstract namespace belongs to a network namespace: two containers that share a data
 * directory but not a network namespace do not see each other's lock (docs/operations.md).
 */
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { writeAtomic } from './data-dir.ts';
import { StartRefusedError } from './start-refusal.ts';

/** The file beside the lock that names its holder (pid, role, since). */
export const LOCK_FILE = 'lock';
/** The lock's socket file where there is no abstract namespace (not Linux). */
const LOCK_SOCKET_FILE = 'lock.sock';

/** Who holds a data directory, as its `lock` file says. */
export interface LockHolder {
  readonly pid: number;
  /** What holds it: `server`, `verify`, `rebuild-history`. */
  readonly role: string;
  /** ISO time the lock was taken. */
  readonly since: string;
}

/** A held lock; `release` frees it (the process's exit frees it too). */
export interface DataLock {
  /** The socket address bound (`\0bourse-data-…` on Linux). */
  readonly address: string;
  release(): Promise<void>;
}

/**
 * The lock's address for the existing directory `root`: one per directory, whatever path names
 * it (symbolic links, `..`, bind mounts).
 */
export function lockAddress(root: string): string {
  if (process.platform !== 'linux') return join(root, LOCK_SOCKET_FILE);
  const { dev, ino } = statSync(root, { bigint: true });
  const digest = createHash('sha256').update(`bourse-data\0${dev}\0${ino}`).digest('hex').slice(0, 32);
  return `\0bourse-data-${digest}`;
}

/** The holder named by `<root>/lock`, or undefined when the file is missing or unreadable. */
export function readLockHolder(root: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(root, LOCK_FILE), 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.role !== 'string') return undefined;
    return { pid: parsed.pid, role: parsed.role, since: String(parsed.since ?? '') };
  } catch {
    return undefined;
  }
}

function describeHolder(holder: LockHolder | undefined): string {
  if (holder === undefined) return 'another process (it has not written its pid to the lock file yet)';
  return `pid ${holder.pid} (bourse ${holder.role}, since ${holder.since})`;
}

function bind(server: Server, address: string): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const onError = (error: NodeJS.ErrnoException): void => resolve(error);
    server.once('error', onError);
    server.listen({ path: address, exclusive: true }, () => {
      server.off('error', onError);
      resolve(undefined);
    });
  });
}

/** Whether a process accepts on the socket file `path` (false: a leftover of a dead one). */
function accepting(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ path });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Takes the lock of the existing directory `root` for `role`, then writes `<root>/lock` (mode
 * 0600) naming this process. Throws a StartRefusedError, having written nothing, when another
 * process holds it: `the data directory … is in use by pid N (bourse server, since …)`, followed
 * by `advice`. Take it before writing anything else in the directory.
 */
export async function acquireDataLock(root: string, role: string, advice: string): Promise<DataLock> {
  const address = lockAddress(root);
  const server = createServer((socket) => socket.destroy());
  let error = await bind(server, address);
  if (error?.code === 'EADDRINUSE' && process.platform !== 'linux' && !(await accepting(address))) {
    rmSync(address, { force: true });
    error = await bind(server, address);
  }
  if (error !== undefined) {
    if (error.code !== 'EADDRINUSE') throw error;
    throw new StartRefusedError(
      `the data directory ${realpathSync(root)} is in use by ${describeHolder(readLockHolder(root))}: ${advice}`,
    );
  }
  // The lock must not keep the process alive by itself.
  server.unref();
  const holder: LockHolder = { pid: process.pid, role, since: new Date().toISOString() };
  writeAtomic(join(root, LOCK_FILE), `${JSON.stringify(holder)}\n`, 0o600);
  let released: Promise<void> | undefined;
  return {
    address,
    release: () =>
      (released ??= (async () => {
        // The file first, while the lock still keeps others from writing theirs.
        if (readLockHolder(root)?.pid === process.pid) rmSync(join(root, LOCK_FILE), { force: true });
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })()),
  };
}
