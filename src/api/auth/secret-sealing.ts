/** @module secret-sealing — API key secrets at rest: AES-256-GCM sealing of sha1hex(secret) under a master key kept outside the data directory, and key generation. */
import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { secretHash } from './signature.ts';

/** Environment variable holding the master key as 64 hex digits. */
export const MASTER_KEY_ENV = 'BOURSE_MASTER_KEY';
const MASTER_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SEALED_VERSION = 'v1';
/** What sealing encrypts: a secret hash is 40 lowercase hex digits. */
const SECRET_HASH = /^[0-9a-f]{40}$/;
const MASTER_KEY_HEX = /^[0-9a-fA-F]{64}$/;

/** Seals and unseals secret hashes; see docs/api-keys.md for the scheme. */
export interface SecretSealer {
  /**
   * Encrypts `secretHashHex` (sha1hex of the secret) for the key `accessKey`. The access key is
   * authenticated data: a sealed secret copied onto another key record does not open.
   * Text form: `v1.<key id>.<iv>.<ciphertext+tag>` (base64url parts).
   */
  seal(secretHashHex: string, accessKey: string): string;
  /** The secret hash, or `undefined` when the text is malformed, tampered, for another key, or sealed under an unknown master key. */
  unseal(sealed: string, accessKey: string): string | undefined;
}

/** A short public fingerprint of a master key, so sealed texts say which key opens them (key rotation). */
export function masterKeyId(masterKey: Uint8Array): string {
  return createHash('sha256').update('bourse-master-key-id\0').update(masterKey).digest('hex').slice(0, 16);
}

function aad(accessKey: string): Buffer {
  return Buffer.from(`bourse-api-key-secret\0${accessKey}`, 'utf8');
}

/**
 * A sealer that seals with `masterKey` and opens texts sealed with it or with any of
 * `previousKeys` (so an operator can rotate the master key and re-seal at leisure).
 * Throws if a key is not 32 bytes.
 */
export function createSecretSealer(
  masterKey: Uint8Array,
  previousKeys: readonly Uint8Array[] = [],
): SecretSealer {
  const keys = new Map<string, Buffer>();
  for (const k of [masterKey, ...previousKeys]) {
    if (k.length !== MASTER_KEY_BYTES) throw new Error(`master key must be ${MASTER_KEY_BYTES} bytes`);
    keys.set(masterKeyId(k), Buffer.from(k));
  }
  const currentId = masterKeyId(masterKey);
  const current = keys.get(currentId) as Buffer;

  return {
    seal(secretHashHex, accessKey) {
      if (!SECRET_HASH.test(secretHashHex)) throw new Error('a secret hash is 40 lowercase hex digits');
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(aad(accessKey));
      const body = Buffer.concat([cipher.update(secretHashHex, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return [SEALED_VERSION, currentId, iv.toString('base64url'), body.toString('base64url')].join('.');
    },
    unseal(sealed, accessKey) {
      if (typeof sealed !== 'string' || sealed.length > 1024) return undefined;
      const parts = sealed.split('.');
      if (parts.length !== 4 || parts[0] !== SEALED_VERSION) return undefined;
      const key = keys.get(parts[1] as string);
      if (key === undefined) return undefined;
      const iv = Buffer.from(parts[2] as string, 'base64url');
      const body = Buffer.from(parts[3] as string, 'base64url');
      if (iv.length !== IV_BYTES || body.length <= TAG_BYTES) return undefined;
      // Only the canonical text: base64url's last character has spare bits, and a text that
      // differs there (or holds stray characters the decoder skips) is not the sealed one.
      if (iv.toString('base64url') !== parts[2] || body.toString('base64url') !== parts[3]) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(aad(accessKey));
        decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
        const plain = Buffer.concat([
          decipher.update(body.subarray(0, body.length - TAG_BYTES)),
          decipher.final(),
        ]);
        const text = plain.toString('utf8');
        return SECRET_HASH.test(text) ? text : undefined;
      } catch {
        // Authentication failed: tampered text, another access key, or a different master key.
        return undefined;
      }
    },
  };
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

/** New API credentials: what the user is shown once (accessKey, secret) and what the server seals (secretHash). */
export interface NewApiCredentials {
  /** UUID text, like the real API's keys (fits `ACCESS_KEY`). */
  readonly accessKey: string;
  /** 122 random bits as UUID text, like the real API's secrets. Shown once, never stored. */
  readonly secret: string;
  /** sha1hex(secret): the HMAC key, to be sealed. */
  readonly secretHash: string;
}

/** Generates an access key and a secret from the system's CSPRNG. */
export function generateApiCredentials(): NewApiCredentials {
  const secret = randomUUID();
  return { accessKey: randomUUID(), secret, secretHash: secretHash(secret) };
}

/** A new key as issued: the access key and secret the user is shown once, and the sealed secret the engine keeps. */
export interface IssuedApiKey {
  readonly accessKey: string;
  readonly secretKey: string;
  readonly sealedSecret: string;
}

/** Generates credentials and seals their hash: the one way keys are issued (operator and createSubUserKey). */
export function issueSealedKey(sealer: SecretSealer): IssuedApiKey {
  const c = generateApiCredentials();
  return {
    accessKey: c.accessKey,
    secretKey: c.secret,
    sealedSecret: sealer.seal(c.secretHash, c.accessKey),
  };
}
