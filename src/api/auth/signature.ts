/** @module signature — ZB request signing: sha1hex(secret) as the HMAC-MD5 key over the sorted (or as-sent) parameters, for REST and WebSocket. */
import { createHash, createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { RequestParam } from '../http/types.ts';

/**
 * Parameters never part of the signed string: `sign` and `reqTime` are appended after signing
 * by every client, and the official Java demo also leaves out `tx`.
 */
export const UNSIGNED_PARAMS: ReadonlySet<string> = new Set(['sign', 'reqTime', 'tx']);

/** A signature is 32 hex digits (HMAC-MD5). */
const SIGN_TEXT = /^[0-9a-fA-F]{32}$/;

/** sha1hex(secret): 40 lowercase hex digits. This, not the secret, is the HMAC key (and all the server keeps). */
export function secretHash(secret: string): string {
  return createHash('sha1').update(secret, 'utf8').digest('hex');
}

/**
 * The HMAC key: sha1hex(secret) as text (its UTF-8 bytes are the key), or the same bytes as a
 * KeyObject. A server verifying many requests with one key keeps the KeyObject (`signingKeyOf`):
 * the key's bytes are imported once, and every check is node:crypto's HMAC-MD5 over the message.
 */
export type SigningKey = string | KeyObject;

/** The KeyObject of sha1hex(secret), for a server to keep per API key. */
export function signingKeyOf(secretHashHex: string): KeyObject {
  return createSecretKey(Buffer.from(secretHashHex, 'utf8'));
}

/** hex(HMAC-MD5(key = utf8(secretHashHex), message = utf8(message))): 32 lowercase hex digits. */
export function hmacMd5Hex(key: SigningKey, message: string): string {
  return createHmac('md5', key).update(message, 'utf8').digest('hex');
}

/**
 * Whether `sign` (32 hex digits, either case: checked by the callers) is the HMAC of `message`,
 * compared as bytes in constant time.
 */
function signs(key: SigningKey, message: string, sign: string): boolean {
  const digest = createHmac('md5', key).update(message, 'utf8').digest();
  return timingSafeEqual(digest, Buffer.from(sign, 'hex'));
}

/** Plain UTF-16 code-unit order, as JavaScript's default sort and Java's TreeMap use. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function signedParams(params: readonly RequestParam[]): RequestParam[] {
  return params.filter((p) => !UNSIGNED_PARAMS.has(p.name)).sort((a, b) => byCodeUnits(a.name, b.name));
}

/**
 * The signed string from decoded values: every parameter except sign, reqTime and tx, sorted by
 * name, `name=value` joined by `&`. What ccxt (without `+`/`&` in values), the Java POST demo and
 * zapi.py sign.
 */
export function decodedSignedString(params: readonly RequestParam[]): string {
  return signedParams(params)
    .map((p) => `${p.name}=${p.value}`)
    .join('&');
}

/**
 * The signed string from the raw segments exactly as received (still percent-encoded), sorted by
 * decoded name. What Go (`url.Values.Encode`), PHP (`urlencode`) and coinrust's raw `tradeParams`
 * sign (zb-api-facts §4.2).
 */
export function rawSignedString(params: readonly RequestParam[]): string {
  return signedParams(params)
    .map((p) => p.raw)
    .join('&');
}

/** Signs a parameter list the way ccxt does (decoded values): for clients, tests and tools. */
export function signParams(secretHashHex: string, params: readonly RequestParam[]): string {
  return hmacMd5Hex(secretHashHex, decodedSignedString(params));
}

/**
 * Whether `sign` matches the request: over the parameters sorted by name (the interface's rule) or
 * in the order they were sent (ZB's Python SDK signs `addSubUser` over `memo`, `password`,
 * `method`, `subUserName` as it sends them), each under either encoding convention (§4.2): the
 * string rebuilt from decoded values, or from the raw segments. Every form needs the secret.
 * The sorted decoded string is tried first (ccxt, the Java demos, zapi.py); each other one only
 * when the ones before failed and it differs from them, so a request that is already sorted and
 * plain costs one HMAC, and one carrying `[`, `,` or `%` (every orderMoreV2) one too when signed
 * decoded: node:crypto's HMAC was the heaviest single step of a signed request on the event loop
 * (issue 30, bench/README.md). Each comparison is constant-time; which of them run tells the
 * sender only which convention it signed with, which it knows, and a forger's first check always
 * fails, so the timing tells a forger nothing about the key.
 */
export function verifyRequestSignature(
  key: SigningKey,
  params: readonly RequestParam[],
  sign: string,
): boolean {
  if (!SIGN_TEXT.test(sign)) return false;
  const sent = params.filter((p) => !UNSIGNED_PARAMS.has(p.name));
  const sorted = [...sent].sort((a, b) => byCodeUnits(a.name, b.name));
  const decoded = sorted.map((p) => `${p.name}=${p.value}`).join('&');
  if (signs(key, decoded, sign)) return true;
  const raw = sorted.map((p) => p.raw).join('&');
  if (raw !== decoded && signs(key, raw, sign)) return true;
  if (sent.every((p, i) => p === sorted[i])) return false;
  const sentDecoded = sent.map((p) => `${p.name}=${p.value}`).join('&');
  if (signs(key, sentDecoded, sign)) return true;
  const sentRaw = sent.map((p) => p.raw).join('&');
  return sentRaw !== sentDecoded && signs(key, sentRaw, sign);
}

/** The signed string over the parameters in the order sent (decoded values): what ZB's Python SDK signs for addSubUser. */
export function sentOrderSignedString(params: readonly RequestParam[]): string {
  return params
    .filter((p) => !UNSIGNED_PARAMS.has(p.name))
    .map((p) => `${p.name}=${p.value}`)
    .join('&');
}

// ───────────────────────────── WebSocket (§10.8) ─────────────────────────────

type JsonScalar = string | number | boolean | null;

function sortedEntries(message: Readonly<Record<string, unknown>>): [string, unknown][] {
  return Object.entries(message)
    .filter(([k, v]) => k !== 'sign' && v !== undefined)
    .sort(([a], [b]) => byCodeUnits(a, b));
}

/**
 * The WS subscription's signed text: the message without `sign`, keys sorted, compact JSON with
 * values keeping their JSON types: `{"accesskey":"..","channel":"..","event":"addChannel"}`.
 */
export function wsSignedText(message: Readonly<Record<string, unknown>>): string {
  return JSON.stringify(Object.fromEntries(sortedEntries(message)));
}

/** The all-strings variant (zb2017 vnzb.py): every value quoted as a string. */
export function wsSignedTextAllStrings(message: Readonly<Record<string, unknown>>): string {
  return JSON.stringify(
    Object.fromEntries(sortedEntries(message).map(([k, v]) => [k, typeof v === 'string' ? v : stringOf(v)])),
  );
}

function stringOf(v: unknown): string {
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v as JsonScalar);
}

/** The sign a client puts on a WS subscription (sorted compact JSON form). */
export function signWsMessage(key: SigningKey, message: Readonly<Record<string, unknown>>): string {
  return hmacMd5Hex(key, wsSignedText(message));
}

/** Whether a WS message's `sign` matches the sorted compact JSON or the all-strings variant. */
export function verifyWsSignature(
  key: SigningKey,
  message: Readonly<Record<string, unknown>>,
  sign: string,
): boolean {
  if (!SIGN_TEXT.test(sign)) return false;
  const typed = signs(key, wsSignedText(message), sign);
  const strings = signs(key, wsSignedTextAllStrings(message), sign);
  return typed || strings;
}
