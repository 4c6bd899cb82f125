/**
 * @module data-dir — the files a venue keeps in its data directory besides journal, snapshots,
 * history and the simulated chain: the genesis configuration the journal starts from, and the
 * admin token.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { VenueConfig } from '../domain/specs.ts';
import { DEFAULT_VENUE } from './default-venue.ts';

export const GENESIS_FILE = 'genesis.json';
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
  if (!existsSync(path)) writeAtomic(path, `${JSON.stringify(DEFAULT_VENUE, null, 2)}\n`, 0o644);
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

/** The admin token, created on first start, readable only by its owner (mode 0600). */
export function ensureAdminToken(root: string): string {
  mkdirSync(root, { recursive: true });
  const path = join(root, ADMIN_TOKEN_FILE);
  if (!existsSync(path)) writeAtomic(path, `${randomBytes(32).toString('hex')}\n`, 0o600);
  return readFileSync(path, 'utf8').trim();
}
