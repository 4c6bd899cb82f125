/**
 * @module disk-failure — a stop caused by the disk rather than a bug, said plainly: a full disk
 * (ENOSPC, EDQUOT, SQLite's "database or disk is full") is the operator's to free, a failing
 * device (EIO, EROFS) theirs to check. A bug keeps its stack.
 */
import { resolve } from 'node:path';

/** A stop caused by the disk: its group 1 names the errno, group 2 SQLite's words. */
const DISK_FAILURE = /\b(ENOSPC|EDQUOT|EIO|EROFS)\b|(SQLITE_FULL|database or disk is full)/;

/** What the disk did, from an error's message; undefined for anything else. */
export function diskFailure(message: string): 'full' | 'failing' | undefined {
  const disk = DISK_FAILURE.exec(message);
  if (disk === null) return undefined;
  return disk[1] === 'EIO' || disk[1] === 'EROFS' ? 'failing' : 'full';
}

/** The advice appended to a stop's line (empty when the disk is not the cause). */
export function diskAdvice(message: string, dataDir: string): string {
  const disk = diskFailure(message);
  if (disk === undefined) return '';
  return disk === 'failing'
    ? `; check the device holding ${resolve(dataDir)}`
    : `; free space on the disk holding ${resolve(dataDir)}`;
}
