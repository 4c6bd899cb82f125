/**
 * @module fund-password — the fund (withdrawal) password: hashed at the edge with scrypt, its
 * parameters recorded in the hash text so that they can be raised later, and checked in constant
 * time. The engine never sees a password: only the hash (SetFundPassword) and the outcome of a
 * wrong check (RecordFundPasswordFailure), both journaled.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt cost for new hashes: N = 2^14, r = 8, p = 1 (16 MiB and tens of ms), 16-byte salt, 32-byte key. */
export const FUND_PASSWORD_SCRYPT = { N: 16_384, r: 8, p: 1, saltBytes: 16, keyBytes: 32 } as const;

/** 6 to 64 printable ASCII characters (space included). */
export const FUND_PASSWORD = /^[\x20-\x7e]{6,64}$/;

/** The hash text: `scrypt$<N>$<r>$<p>$<salt, base64url>$<key, base64url>`. */
const HASH_TEXT =
  /^scrypt\$(\d{1,8})\$(\d{1,3})\$(\d{1,3})\$([A-Za-z0-9_-]{8,128})\$([A-Za-z0-9_-]{16,128})$/;

function derive(password: string, salt: Buffer, keyBytes: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keyBytes, options, (error, key) =>
      error === null ? resolve(key) : reject(error),
    ),
  );
}

/** scrypt needs 128 × N × r bytes; twice that leaves room. */
const limits = (N: number, r: number, p: number): ScryptOptions => ({
  N,
  r,
  p,
  maxmem: 256 * N * r + 1_048_576,
});

/** Hashes a password (already checked against FUND_PASSWORD) with a fresh salt. */
export async function hashFundPassword(password: string): Promise<string> {
  const { N, r, p, saltBytes, keyBytes } = FUND_PASSWORD_SCRYPT;
  const salt = randomBytes(saltBytes);
  const key = await derive(password, salt, keyBytes, limits(N, r, p));
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/**
 * Whether `password` matches `stored` (a hash made by `hashFundPassword`, with whatever
 * parameters it records). A hash text of another form matches nothing.
 */
export async function verifyFundPassword(password: string, stored: string): Promise<boolean> {
  const m = HASH_TEXT.exec(stored);
  if (m === null) return false;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const expected = Buffer.from(m[5] as string, 'base64url');
  // A cost far beyond what this module writes is a corrupt or hostile hash: refuse, do not run it.
  if (N < 2 || N > 1_048_576 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return false;
  const key = await derive(
    password,
    Buffer.from(m[4] as string, 'base64url'),
    expected.length,
    limits(N, r, p),
  );
  return timingSafeEqual(key, expected);
}
