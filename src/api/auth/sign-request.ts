/** @module sign-request — the client side of ZB request signing: the query string a client sends for a signed method (the demo market's bots use it; so do the tests). */
import { hmacMd5Hex, secretHash } from './signature.ts';

/**
 * The signed query string for `method` with `params`: `accesskey` and `method` added, every
 * parameter sorted by name, the raw values signed as ccxt signs them (HMAC-MD5 keyed by
 * sha1hex(secret)), the values percent-encoded on the wire, then `sign` and `reqTime` (now, ms)
 * appended.
 */
export function signedQuery(
  method: string,
  params: readonly [string, string][],
  accessKey: string,
  secret: string,
  reqTime: number = Date.now(),
): string {
  const all: [string, string][] = [...params, ['accesskey', accessKey], ['method', method]];
  all.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const signed = all.map(([k, v]) => `${k}=${v}`).join('&');
  const sign = hmacMd5Hex(secretHash(secret), signed);
  const query = all.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
  return `${query}&sign=${sign}&reqTime=${reqTime}`;
}
