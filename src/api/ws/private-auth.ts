/**
 * @module private-auth — checks a signed subscription to a private channel (zb-api-facts §10.8):
 * the access key, the signature over the message (sorted compact JSON, or its all-strings
 * variant), the key's bound IPs and the channel's permission. There is no login step and no
 * `reqTime`: each private subscription carries its own signature.
 */
import type { VenueState } from '../../sequencer/venue-ports.ts';
import { normalizeIp, PERMISSION_FLAGS, type Authenticator, type Permission } from '../auth/authenticate.ts';
import { verifyWsSignature } from '../auth/signature.ts';
import type { ResultName } from '../../domain/result-codes.ts';
import { quoted } from '../edge/refusal.ts';
import type { PrivateChannel } from './channels.ts';
import type { Grant } from './fan-out.ts';

/** A subscription's grant, or why it is refused (answered as the edge's error body). */
export type Authorized =
  | { readonly ok: true; readonly value: Grant }
  | { readonly ok: false; readonly result: ResultName; readonly message: string };

/** The permission each private channel needs: orders need entrustPerm, balances assetPerm. */
export const CHANNEL_PERMISSION: Readonly<Record<PrivateChannel['kind'], Permission>> = {
  push_user_incr_record: 'entrust',
  push_user_asset: 'asset',
  push_user_incr_asset: 'asset',
  push_user_cross_asset: 'asset',
};

/**
 * Who `message` (the whole parsed subscription, `sign` included) is signed for. Refusals, in this
 * order so that nothing about a key is revealed before its signature holds: `accesskey` or
 * `sign` missing, the key unknown or its secret not openable here, or the signature not matching
 * → AUTH_FAILED (1003); the key bound to IPs that do not include the connection's → IP_NOT_BOUND
 * (3006); the key lacking the channel's permission → PERMISSION_DENIED (1012); a key with replay
 * protection and a `nonce` missing, stale or already used → as `Authenticator.checkOnce` says.
 */
export function authorize(
  engine: VenueState,
  authenticator: Authenticator,
  message: Readonly<Record<string, unknown>>,
  channel: PrivateChannel,
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
  const permission = CHANNEL_PERMISSION[channel.kind];
  if (!key.permissions[permission]) {
    return {
      ok: false,
      result: 'PERMISSION_DENIED',
      message: `this API key lacks ${PERMISSION_FLAGS[permission]}, which ${channel.name} needs`,
    };
  }
  const once = authenticator.checkOnce(key, message['nonce'], sign, now);
  if (once !== undefined) return once;
  return { ok: true, value: { userId: key.userId, accessKey: key.accessKey } };
}
