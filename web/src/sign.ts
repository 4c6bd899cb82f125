/**
 * @module sign — ZB request signing in the browser, exactly as any client signs (docs/api-keys.md):
 * the HMAC key is sha1hex(secret); REST signs the sorted `name=value` parameters, WebSocket the
 * sorted compact JSON of the subscription. Web Crypto has no MD5, so MD5, SHA-1 and HMAC come from
 * @noble/hashes (small, audited, no dependencies).
 */
import { hmac } from '@noble/hashes/hmac.js';
import { md5, sha1 } from '@noble/hashes/legacy.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/** sha1hex(secret): the HMAC key, and all the page keeps of the secret. */
export function secretHash(secret: string): string {
  return bytesToHex(sha1(utf8ToBytes(secret)));
}

/** hex(HMAC-MD5(key = utf8(sha1hex), message = utf8(message))). */
export function hmacMd5Hex(keyHex: string, message: string): string {
  return bytesToHex(hmac(md5, utf8ToBytes(keyHex), utf8ToBytes(message)));
}

const byName = (a: [string, string], b: [string, string]): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

/**
 * The query string of a signed call: `accesskey` and `method` added, the parameters sorted by
 * name and signed raw, sent percent-encoded, then `sign` and `reqTime` appended.
 */
export function signedQuery(
  method: string,
  params: readonly [string, string][],
  accessKey: string,
  keyHex: string,
  reqTime: number,
): string {
  const all: [string, string][] = [...params, ['accesskey', accessKey], ['method', method]];
  all.sort(byName);
  const sign = hmacMd5Hex(keyHex, all.map(([k, v]) => `${k}=${v}`).join('&'));
  const query = all.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  return `${query}&sign=${sign}&reqTime=${reqTime}`;
}

/** A private subscription with `accesskey` and `sign` added: the sign covers the sorted compact JSON of every other field. */
export function signedSubscription(
  message: Readonly<Record<string, string>>,
  accessKey: string,
  keyHex: string,
): Record<string, string> {
  const fields: [string, string][] = [...Object.entries(message), ['accesskey', accessKey]];
  fields.sort(byName);
  const text = JSON.stringify(Object.fromEntries(fields));
  return { ...Object.fromEntries(fields), sign: hmacMd5Hex(keyHex, text) };
}
