/**
 * @module open-data-dir — a server's hold on its data directory: created if new, everything in it
 * the owner's only (umask; entries made readable by others are tightened, and the operator told),
 * and its lock taken before anything is written in it (one process per data directory).
 */
import { mkdirSync } from 'node:fs';
import type { Log } from '../domain/log.ts';
import { DATA_UMASK, DIR_MODE, tightenDataDir } from './data-dir.ts';
import { acquireDataLock, type DataLock } from './data-lock.ts';

/** What a second server on a data directory is told. */
const SERVER_LOCK_ADVICE =
  'stop it first (one process per data directory; a copy of the directory may run elsewhere)';

/** Holds `root` for this server (the module comment); the caller releases the lock when it stops. */
export async function lockDataDir(root: string, log: Log): Promise<DataLock> {
  process.umask(DATA_UMASK);
  mkdirSync(root, { recursive: true, mode: DIR_MODE });
  const lock = await acquireDataLock(root, 'server', SERVER_LOCK_ADVICE);
  try {
    const loosened = tightenDataDir(root);
    if (loosened.length > 0) {
      log.warn(
        { paths: loosened.slice(0, 20) },
        `made ${loosened.length} entries of the data directory readable by the owner only (directories 0700, files 0600)`,
      );
    }
    return lock;
  } catch (error) {
    await lock.release();
    throw error;
  }
}
