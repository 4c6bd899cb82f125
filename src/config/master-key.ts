/**
 * @module master-key — the venue's master key as the operator keeps it: 64 hex digits in a key file
 * outside the data directory or in BOURSE_MASTER_KEY, loaded and checked at start, and its public id
 * (venue.json records it). What the key seals is the API's (src/api/auth/secret-sealing.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';

/** Environment variable holding the master key as 64 hex digits. */
export const MASTER_KEY_ENV = 'BOURSE_MASTER_KEY';
/** A master key's length. */
export const MASTER_KEY_BYTES = 32;
const MASTER_KEY_HEX = /^[0-9a-fA-F]{64}$/;

/** A short public fingerprint of a master key, so sealed texts say which key opens them (key rotation). */
export function masterKeyId(masterKey: Uint8Array): string {
  return createHash('sha256').update('bourse-master-key-id\0').update(masterKey).digest('hex').slice(0, 16);
}

/** A fresh master key as 64 hex digits (for `BOURSE_MASTER_KEY` or a key file). */
export function generateMasterKeyHex(): string {
  return randomBytes(MASTER_KEY_BYTES).toString('hex');
}

/** Writes a new master key file readable only by its owner; refuses to overwrite an existing file. */
export function writeMasterKeyFile(path: string): void {
  writeFileSync(path, `${generateMasterKeyHex()}\n`, { mode: 0o600, flag: 'wx' });
}

export interface MasterKeyOptions {
  /** Environment to read `BOURSE_MASTER_KEY` from (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** A key file given by the operator (64 hex digits); takes precedence over the environment. */
  readonly keyFile?: string | undefined;
  /** The data directory: a key file inside it is refused unless `allowKeyInDataDir`. */
  readonly dataDir?: string | undefined;
  /** Accept a key file inside the data directory (a leaked data directory then leaks the keys). */
  readonly allowKeyInDataDir?: boolean;
  /** Receives warnings (a key file readable by group or others). */
  readonly warn?: (message: string) => void;
}

function isInside(dir: string, path: string): boolean {
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const rel = relative(real(dir), real(path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function parseMasterKey(text: string, source: string): Buffer {
  const hex = text.trim();
  if (!MASTER_KEY_HEX.test(hex))
    throw new Error(`${source}: the master key must be 64 hex digits (32 bytes)`);
  return Buffer.from(hex, 'hex');
}

/**
 * Loads the master key from the operator's key file, else from `BOURSE_MASTER_KEY`. Throws with
 * an explanation when there is none, it is malformed, or the key file lies inside the data
 * directory (unless allowed): a key stored beside the sealed secrets would protect nothing.
 */
export function loadMasterKey(options: MasterKeyOptions = {}): Buffer {
  const env = options.env ?? process.env;
  if (options.keyFile !== undefined) {
    const file = resolve(options.keyFile);
    if (options.dataDir !== undefined && !options.allowKeyInDataDir && isInside(options.dataDir, file)) {
      throw new Error(
        `master key file ${file} is inside the data directory ${resolve(options.dataDir)}: ` +
          'keep it elsewhere (or allow it explicitly, knowing a leaked data directory then leaks usable keys)',
      );
    }
    const mode = statSync(file).mode;
    if ((mode & 0o077) !== 0 && process.platform !== 'win32') {
      options.warn?.(`master key file ${file} is readable by group or others; chmod 600 it`);
    }
    return parseMasterKey(readFileSync(file, 'utf8'), file);
  }
  const fromEnv = env[MASTER_KEY_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return parseMasterKey(fromEnv, MASTER_KEY_ENV);
  throw new Error(
    `no master key: set ${MASTER_KEY_ENV} to 64 hex digits, or give a key file (64 hex digits, mode 600) ` +
      'outside the data directory',
  );
}
