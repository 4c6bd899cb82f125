/**
 * @module private-auth — checks a signed subscription to a private channel (zb-api-facts §10.8),
 * or a signed request on a request channel (§10.9, requests.ts):
 * the access key, the signature over the message (sorted compact JSON, or its all-strings
 * variant), the key's bound IPs and the channel's permission. There is no login step and no
 * `reqTime`: each private subscription carries its own signature.
 */
import type { ApiKeyRecord } from '../../engine/engine.ts';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import { normalizeIp, PERMISSION_FLAGS, type Authenticator, type Permission } from '../auth/authenticate.ts';
import { verifyWsSignature } from '../auth/signature.ts';
import type { ResultName } from '../../domain/result-codes.ts';
import { quoted } from '../edge/refusal.ts';
import type { PrivateChannel } from './channels.ts';
import type { Grant } from './fan-out.ts';

/** A subscription's grant (and the key it was signed with), or why it is refused (answered as the edge's error body). */
export type Authorized =
  | { readonly ok: true; readonly value: Grant; readonly key: ApiKeyRecord }
  | { readonly ok: false; readonly result: ResultName; readonly message: string };

/** The permission each private channel needs: orders need entrustPerm, balances assetPerm. */
export const CHANNEL_PERMISSION: Readonly<Record<PrivateChannel['kind'], Permission>> = {
  push_user_incr_record: 'entrust',
  push_user_asset: 'asset',
  push_user_incr_asset: 'asset',
  push_user_cross_asset: 'asset',
};

/** What a signed message asks for: a private channel, or a request channel (requests.ts). */
export interface SignedTarget {
  /** The channel's name, for messages. */
  readonly name: string;
  /** The permission its key needs. */
  readonly permission: Permission;
}

/** A private channel as a signed target: its name and CHANNEL_PERMISSION. */
export function privateTarget(channel: PrivateChannel): SignedTarget {
  return { name: channel.name, permission: CHANNEL_PERMISSION[channel.kind] };
}

/**
 * Who `message` (the whole parsed subscription or request, `sign` included) is signed for. Refusals, in this
 * order so that nothing about a key is revealed before its signature holds: `accesskey` or
 * `sign` missing, the key unknown or its secret not openable here, or the signature not matching
 * → AUTH_FAILED (1003); the key bound to IPs that do not include the connection's → IP_NOT_BOUND
 * (3006); the key lacking the target's permission → PERMISSION_DENIED (1012); a key with replay
 * protection and a `nonce` missing, stale or already used → as `Authenticator.checkOnce` says.
 */
export function authorize(
  engine: VenueState,
  authenticator: Authenticator,
  message: Readonly<Record<string, unknown>>,
  target: SignedTarget,
  ip: string,
  now: number,
): Authorized {
  const accessKey = message['accesskey'];
  const sign = message['sign'];
  if (typeof accessKey !== 'string' || accessKey === '') {
    return {
      ok: false,
      result: 'AUTH_FAILED',
      message: 'accesskey missing: private channels need a signed subscription',
    };
  }
  if (typeof sign !== 'string' || sign === '')
    return { ok: false, result: 'AUTH_FAILED', message: 'sign missing' };
  const key = engine.apiKey(accessKey);
  if (key === undefined)
    return { ok: false, result: 'AUTH_FAILED', message: `unknown accesskey ${quoted(accessKey)}` };
  const signingKey = authenticator.signingKey(key);
  if (signingKey === undefined) {
    return {
      ok: false,
      result: 'AUTH_FAILED',
      message: "this API key's secret cannot be opened on this server; ask the operator",
    };
  }
  if (!verifyWsSignature(signingKey, message, sign)) {
    return {
      ok: false,
      result: 'AUTH_FAILED',
      message:
        'signature does not match: sign HMAC-MD5(sha1hex(secret)) over the message without sign, ' +
        'as compact JSON with its keys sorted',
    };
  }
  if (key.ips.length > 0) {
    const from = normalizeIp(ip);
    if (!key.ips.some((bound) => normalizeIp(bound) === from)) {
      return {
        ok: false,
        result: 'IP_NOT_BOUND',
        message: `connection IP ${ip} is not bound to this API key`,
      };
    }
  }
  const { permission } = target;
  if (!key.permissions[permission]) {
    return {
      ok: false,
      result: 'PERMISSION_DENIED',
      message: `this API key lacks ${PERMISSION_FLAGS[permission]}, which ${target.name} needs`,
    };
  }
  const once = authenticator.checkOnce(key, message['nonce'], sign, now);
  if (once !== undefined) return once;
  return { ok: true, value: { userId: key.userId, accessKey: key.accessKey }, key };
}
