/** @module authenticate — checks a signed request: access key, signature, reqTime window, bound IPs, method name and the endpoint's permission. */
import type { KeyPermissions } from '../../domain/commands.ts';
import type { ResultName } from '../../domain/result-codes.ts';
import type { ApiKeyRecord } from '../../engine/engine.ts';
import { quoted } from '../edge/refusal.ts';
import type { ApiRequest, VenuePort } from '../http/types.ts';
import { ReplayGuard } from './replay-guard.ts';
import type { SecretSealer } from './secret-sealing.ts';
import type { KeyObject } from 'node:crypto';
import { signingKeyOf, verifyRequestSignature } from './signature.ts';

/** Default allowed difference between `reqTime` and the server's clock, either way (ms). */
export const DEFAULT_REQ_TIME_WINDOW_MS = 10_000;
/** Most unsealed secret hashes kept in memory (oldest out first). */
const DEFAULT_MAX_CACHED_SECRETS = 100_000;

export type Permission = keyof KeyPermissions;

/** The wire name of each permission flag (getAccountInfo's top-level fields). */
export const PERMISSION_FLAGS: Readonly<Record<Permission, string>> = {
  asset: 'assetPerm',
  entrust: 'entrustPerm',
  money: 'moneyPerm',
  lever: 'leverPerm',
  subUser: 'subUserPerm',
};

/** What an endpoint demands of the caller. */
export interface AuthRequirement {
  /** The endpoint's method name (`/api/<method>`): a `method` parameter, if sent, must equal it. */
  readonly method: string;
  readonly permission: Permission;
}

export type AuthOutcome =
  | { readonly ok: true; readonly key: ApiKeyRecord }
  | { readonly ok: false; readonly result: ResultName; readonly message: string };

export interface AuthenticatorOptions {
  /** Allowed |reqTime − receivedAt| in ms (and |nonce − receivedAt| for strict keys). Default 10,000. */
  readonly reqTimeWindowMs?: number;
  readonly maxCachedSecrets?: number;
  /** The strict keys' remembered signatures (default: a fresh in-memory guard). */
  readonly replayGuard?: ReplayGuard;
}

/** A strict key's `nonce`: the client's time in ms, as digits (up to 16). */
const NONCE = /^\d{1,16}$/;

/**
 * A comparable form of an IP address: lowercase, IPv4-mapped IPv6 as plain IPv4, IPv6 compressed
 * canonically (so `::1` and `0:0:0:0:0:0:0:1` match). Text that is not an address is returned as is.
 */
export function normalizeIp(ip: string): string {
  let text = ip.trim().toLowerCase();
  if (text.startsWith('::ffff:') && text.includes('.')) text = text.slice(7);
  if (!text.includes(':')) return text;
  try {
    const host = new URL(`http://[${text}]/`).hostname;
    const canonical = host.slice(1, -1);
    return canonical.startsWith('::ffff:') && canonical.includes('.') ? canonical.slice(7) : canonical;
  } catch {
    return text;
  }
}

const refuse = (result: ResultName, message: string): AuthOutcome => ({ ok: false, result, message });

/**
 * Authenticates signed requests against the engine's API keys. Unsealed secret hashes are cached
 * in memory (keyed by access key, checked against the sealed text so a replaced key is re-read).
 */
export class Authenticator {
  readonly #venue: VenuePort;
  readonly #sealer: SecretSealer;
  readonly #windowMs: number;
  readonly #maxCached: number;
  readonly #secrets = new Map<string, { readonly sealed: string; readonly key: KeyObject }>();
  readonly #replays: ReplayGuard;

  constructor(venue: VenuePort, sealer: SecretSealer, options: AuthenticatorOptions = {}) {
    this.#venue = venue;
    this.#sealer = sealer;
    this.#windowMs = options.reqTimeWindowMs ?? DEFAULT_REQ_TIME_WINDOW_MS;
    this.#maxCached = options.maxCachedSecrets ?? DEFAULT_MAX_CACHED_SECRETS;
    this.#replays = options.replayGuard ?? new ReplayGuard();
    if (!(this.#windowMs >= 0)) throw new RangeError('reqTimeWindowMs must be ≥ 0');
  }

  /**
   * Checks, in this order (so that nothing about a key is revealed before its signature holds):
   * - a parameter given twice → INVALID_PARAMETER (the signed string and the handler would
   *   disagree about its value);
   * - `accesskey` missing or unknown, `sign` missing or not matching either encoding → AUTH_FAILED;
   * - `reqTime` missing, not an integer, or outside ±window of the arrival time → REQUEST_EXPIRED;
   * - the key is bound to IPs and the request's is not one of them → IP_NOT_BOUND;
   * - a `method` parameter that differs from the path's method → INVALID_PARAMETER;
   * - the key lacks the endpoint's permission → PERMISSION_DENIED;
   * - a strict key (replay protection): as `checkOnce` says.
   */
  authenticate(request: ApiRequest, requirement: AuthRequirement): AuthOutcome {
    const seen = new Set<string>();
    for (const p of request.params) {
      if (seen.has(p.name))
        return refuse('INVALID_PARAMETER', `parameter ${quoted(p.name)} given more than once`);
      seen.add(p.name);
    }
    const get = (name: string): string | undefined => request.params.find((p) => p.name === name)?.value;

    const accessKey = get('accesskey');
    if (accessKey === undefined || accessKey === '') return refuse('AUTH_FAILED', 'accesskey missing');
    const key = this.#venue.engine.apiKey(accessKey);
    if (key === undefined) return refuse('AUTH_FAILED', `unknown accesskey ${quoted(accessKey)}`);
    const sign = get('sign');
    if (sign === undefined || sign === '') return refuse('AUTH_FAILED', 'sign missing');
    const signingKey = this.signingKey(key);
    if (signingKey === undefined) {
      return refuse('AUTH_FAILED', "this API key's secret cannot be opened on this server; ask the operator");
    }
    if (!verifyRequestSignature(signingKey, request.params, sign)) {
      return refuse(
        'AUTH_FAILED',
        'signature does not match: sign HMAC-MD5(sha1hex(secret)) over every parameter except sign and reqTime, ' +
          'sorted by name, joined as name=value with &',
      );
    }

    const reqTimeText = get('reqTime');
    if (reqTimeText === undefined || reqTimeText === '') {
      return refuse('REQUEST_EXPIRED', 'reqTime missing: send the current time in milliseconds');
    }
    if (!/^\d{1,16}$/.test(reqTimeText)) {
      return refuse(
        'REQUEST_EXPIRED',
        `reqTime ${quoted(reqTimeText)} must be the current time in milliseconds`,
      );
    }
    const skew = Number(reqTimeText) - request.receivedAt;
    if (Math.abs(skew) > this.#windowMs) {
      return refuse(
        'REQUEST_EXPIRED',
        `reqTime ${reqTimeText} is ${Math.abs(skew)} ms ${skew < 0 ? 'behind' : 'ahead of'} the server time ` +
          `${request.receivedAt}; at most ${this.#windowMs} ms either way is allowed`,
      );
    }

    if (key.ips.length > 0) {
      const ip = normalizeIp(request.ip);
      if (!key.ips.some((bound) => normalizeIp(bound) === ip)) {
        return refuse('IP_NOT_BOUND', `request IP ${request.ip} is not bound to this API key`);
      }
    }

    const method = get('method');
    if (method !== undefined && method !== requirement.method) {
      return refuse(
        'INVALID_PARAMETER',
        `method ${quoted(method)} does not match the path's method '${requirement.method}'`,
      );
    }

    if (!key.permissions[requirement.permission]) {
      const flag = PERMISSION_FLAGS[requirement.permission];
      return refuse('PERMISSION_DENIED', `this API key lacks ${flag}, which ${requirement.method} needs`);
    }
    return this.checkOnce(key, get('nonce'), sign, request.receivedAt) ?? { ok: true, key };
  }

  /**
   * A strict key's request (its signature already verified), checked once it is otherwise
   * accepted, so that only accepted requests are remembered: `nonce` missing or not digits →
   * INVALID_PARAMETER; more than the window away from `now` → REQUEST_EXPIRED; its signature
   * accepted before → REQUEST_REPLAYED; the key's memory full → RATE_LIMITED. Undefined when the
   * request may go ahead (and for keys without replay protection).
   */
  checkOnce(
    key: ApiKeyRecord,
    nonce: unknown,
    sign: string,
    now: number,
  ): Extract<AuthOutcome, { ok: false }> | undefined {
    if (key.replayProtection !== true) return undefined;
    const text = typeof nonce === 'number' && Number.isSafeInteger(nonce) ? String(nonce) : nonce;
    if (typeof text !== 'string' || !NONCE.test(text)) {
      return {
        ok: false,
        result: 'INVALID_PARAMETER',
        message:
          'this API key has replay protection: sign a parameter nonce holding the current time in ms ' +
          '(a fresh one on every request)',
      };
    }
    const skew = Number(text) - now;
    if (Math.abs(skew) > this.#windowMs) {
      return {
        ok: false,
        result: 'REQUEST_EXPIRED',
        message: `nonce ${text} is ${Math.abs(skew)} ms ${skew < 0 ? 'behind' : 'ahead of'} the server time ${now}; at most ${this.#windowMs} ms either way is allowed`,
      };
    }
    const verdict = this.#replays.admit(key.accessKey, sign, Number(text) + this.#windowMs + 1, now);
    if (verdict === 'replayed') {
      return {
        ok: false,
        result: 'REQUEST_REPLAYED',
        message: 'request already received: this API key accepts each signed request once (sign a new nonce)',
      };
    }
    if (verdict === 'full') {
      return {
        ok: false,
        result: 'RATE_LIMITED',
        message: 'too many requests within the nonce window for this API key; retry shortly',
      };
    }
    return undefined;
  }

  /**
   * The key's HMAC key (sha1hex(secret)) for its signatures, REST and WebSocket, unsealed once and
   * then cached; undefined when this server's master key cannot open it.
   */
  signingKey(key: ApiKeyRecord): KeyObject | undefined {
    const cached = this.#secrets.get(key.accessKey);
    if (cached !== undefined && cached.sealed === key.sealedSecret) return cached.key;
    const hash = this.#sealer.unseal(key.sealedSecret, key.accessKey);
    if (hash === undefined) return undefined;
    this.#secrets.delete(key.accessKey);
    if (this.#secrets.size >= this.#maxCached) {
      const oldest = this.#secrets.keys().next();
      if (oldest.done !== true) this.#secrets.delete(oldest.value);
    }
    const signingKey = signingKeyOf(hash);
    this.#secrets.set(key.accessKey, { sealed: key.sealedSecret, key: signingKey });
    return signingKey;
  }
}
