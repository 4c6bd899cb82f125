/**
 * @module data-dir — the files a venue keeps in its data directory besides journal, snapshots,
 * history and the simulated chain: the genesis configuration the journal starts from, and the
 * admin token; and the directory's modes (the owner only).
 */
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { VenueConfig } from '../domain/specs.ts';
import { DEFAULT_VENUE } from './default-venue.ts';
import { StartRefusedError } from './start-refusal.ts';

export const GENESIS_FILE = 'genesis.json';
/** A data directory and every directory in it: the owner only (it holds every balance). */
export const DIR_MODE = 0o700;
/** Every file in a data directory: readable and writable by the owner only. */
export const FILE_MODE = 0o600;
/**
 * The mask of a process that writes a data directory: whatever creates a file there (the journal,
 * snapshots, SQLite with its -wal and -shm, the chain's log) then creates it for the owner only.
 */
export const DATA_UMASK = 0o077;
export const ADMIN_TOKEN_FILE = 'admin.token';

export interface DataPaths {
  readonly root: string;
  readonly journal: string;
  readonly snapshots: string;
  readonly history: string;
  /** The simulated chain's log. */
  readonly chain: string;
}

export function dataPaths(root: string): DataPaths {
  return {
    root,
    journal: join(root, 'journal'),
    snapshots: join(root, 'snapshots'),
    history: join(root, 'history.sqlite'),
    chain: join(root, 'chain'),
  };
}

/** Writes a small file atomically (temp file, fsync, rename) with the given mode. */
export function writeAtomic(path: string, text: string, mode: number): void {
  const temp = `${path}.tmp`;
  const fd = openSync(temp, 'w', mode);
  try {
    // A temp file left by a crash keeps its old mode: set it.
    fchmodSync(fd, mode);
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

/**
 * The configuration the journal replays from. A fresh data directory gets the default venue,
 * written once; afterwards the file is read as is, so that a replay always starts from the same
 * genesis even if a later version of Bourse changes its defaults.
 */
export function ensureGenesis(root: string): VenueConfig {
  mkdirSync(root, { recursive: true });
  const path = join(root, GENESIS_FILE);
  if (!existsSync(path)) writeAtomic(path, `${JSON.stringify(DEFAULT_VENUE, null, 2)}\n`, FILE_MODE);
  return readGenesis(root);
}

export function readGenesis(root: string): VenueConfig {
  const path = join(root, GENESIS_FILE);
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as VenueConfig;
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/**
 * Tightens an existing data directory: `root` and the directories in it to mode 0700, every other
 * entry to 0600 (symbolic links are left alone). Returns the paths whose mode changed; throws a
 * StartRefusedError when a mode cannot be changed (another user owns the entry).
 */
export function tightenDataDir(root: string): string[] {
  const changed: string[] = [];
  const tighten = (path: string, mode: number): void => {
    if ((lstatSync(path).mode & 0o777) === mode) return;
    try {
      chmodSync(path, mode);
    } catch (error) {
      throw new StartRefusedError(
        `cannot make ${path} readable by its owner only (mode ${mode.toString(8)}): ${(error as Error).message}; ` +
          'run the server as the user who owns the data directory',
      );
    }
    changed.push(path);
  };
  tighten(root, DIR_MODE);
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isSymbolicLink()) continue;
    tighten(join(entry.parentPath, entry.name), entry.isDirectory() ? DIR_MODE : FILE_MODE);
  }
  return changed;
}

/** The admin token, created on first start, readable only by its owner (mode 0600). */
export function ensureAdminToken(root: string): string {
  mkdirSync(root, { recursive: true });
  const path = join(root, ADMIN_TOKEN_FILE);
  if (!existsSync(path)) writeAtomic(path, `${randomBytes(32).toString('hex')}\n`, 0o600);
  return readFileSync(path, 'utf8').trim();
}
