/** @module secret-sealing — API key secrets at rest: AES-256-GCM sealing of sha1hex(secret) under a master key (src/config/master-key.ts: where it is kept, its id), and key generation. */
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { MASTER_KEY_BYTES, masterKeyId } from '../../config/master-key.ts';
import { secretHash } from './signature.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const SEALED_VERSION = 'v1';
/** What sealing encrypts: a secret hash is 40 lowercase hex digits. */
const SECRET_HASH = /^[0-9a-f]{40}$/;

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
