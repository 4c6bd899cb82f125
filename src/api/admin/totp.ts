/**
 * @module totp — time-based one-time passwords (RFC 6238 over RFC 4226's HOTP, HMAC-SHA1, 30 s
 * steps, 6 digits: what authenticator apps use by default), with node:crypto only. The second
 * factor of the operators whose role moves money (operators.ts).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Seconds a code lasts. */
export const TOTP_STEP_S = 30;
export const TOTP_DIGITS = 6;
/** Steps either side of now a code is accepted in (clock drift between the phone and the server). */
export const TOTP_WINDOW = 1;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding (how authenticator apps take a secret). */
export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** Base32 (any case, spaces and padding ignored) to bytes; undefined when it is not base32. */
export function base32Decode(text: string): Buffer | undefined {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of clean) {
    const index = BASE32.indexOf(char);
    if (index < 0) return undefined;
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new secret: 20 random bytes (RFC 4226's recommended length), in base32. */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

/** RFC 4226 HOTP of `counter`, `digits` long. */
export function hotp(secret: Uint8Array, counter: number, digits = TOTP_DIGITS): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', secret).update(message).digest();
  const offset = (mac[mac.length - 1] as number) & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The step a time (ms) falls in. */
export const totpStep = (nowMs: number): number => Math.floor(nowMs / 1000 / TOTP_STEP_S);

/** RFC 6238 TOTP at `nowMs`. */
export const totp = (secret: Uint8Array, nowMs: number, digits = TOTP_DIGITS): string =>
  hotp(secret, totpStep(nowMs), digits);

/**
 * The step whose code `code` is, within TOTP_WINDOW of now and after `usedStep` (a code is used
 * once: a step already used, or an earlier one, is not accepted again); undefined otherwise.
 */
export function verifyTotp(
  secret: Uint8Array,
  code: string,
  nowMs: number,
  usedStep = -1,
): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const now = totpStep(nowMs);
  for (let step = now - TOTP_WINDOW; step <= now + TOTP_WINDOW; step++) {
    if (step <= usedStep) continue;
    if (timingSafeEqual(Buffer.from(hotp(secret, step)), Buffer.from(code))) return step;
  }
  return undefined;
}

/** The `otpauth://` address an authenticator app reads (from a QR code or pasted). */
export function otpauthUri(issuer: string, account: string, secret: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = new URLSearchParams({
    secret,
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_S),
  });
  return `otpauth://totp/${label}?${query.toString()}`;
}
