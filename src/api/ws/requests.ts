/**
 * @module requests — the WebSocket's request/response channels (zb-api-facts §10.9, the channels
 * of ZB's own WebSocket demos): `btcusdt_order`, `btcusdt_cancelorder`, `getaccountinfo`,
 * `usdt_withdraw`, … Each is a signed endpoint of the REST API (`SIGNED_ENDPOINTS`, declared with
 * `webSocket: true`) served over another transport: the same declaration, so the same
 * permission, per-IP and per-key rate limits, parameter readers, handler and refusals.
 *
 * A request is one `addChannel` message, signed as the private channels are (§10.8: HMAC-MD5 over
 * the message without `sign` as sorted compact JSON, or its all-strings variant), its parameters
 * as fields; the channel's market or coin is its `currency`. It is answered once: success
 * `{"message":"success","no":"<no>","data":<the REST reply's body>,"code":1000,"channel":…,"success":true}`,
 * a refusal the §10.7 error frame with the code REST would answer. Nothing is subscribed.
 */
import type { ApiKeyRecord } from '../../engine/engine.ts';
import { logRefusal } from '../../observability/refusal-levels.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import { quoted, Refusal, refuse } from '../edge/refusal.ts';
import { SIGNED_ENDPOINTS } from '../http/signed/index.ts';
import {
  faultReply,
  serveAuthenticated,
  type ServingServices,
  type SignedEndpoint,
} from '../http/signed/pipeline.ts';
import type { ApiReply } from '../http/types.ts';
import { fieldText, type WireMarkets } from './channels.ts';
import { errorFrame } from './error-frame.ts';
import { authorize } from './private-auth.ts';

/** What a request channel's name starts with: a market (`btcusdt_`), a coin (`usdt_`), or nothing. */
export type RequestScope = 'market' | 'coin' | 'account';

/** One request channel: its endpoint, the lower-case method its name ends with, its scope. */
export interface RequestChannel {
  readonly endpoint: SignedEndpoint;
  readonly suffix: string;
  readonly scope: RequestScope;
}

/** The scope of an endpoint's channel, from its `currency` parameter's reader. */
export function scopeOf(endpoint: SignedEndpoint): RequestScope {
  const kind = endpoint.params['currency']?.kind;
  if (kind === 'market') return 'market';
  if (kind === 'coin' || kind === 'anyCaseCoin') return 'coin';
  return 'account';
}

/** Every request channel: the signed endpoints declared `webSocket: true`. */
export const REQUEST_CHANNELS: readonly RequestChannel[] = SIGNED_ENDPOINTS.filter(
  (endpoint) => endpoint.webSocket === true,
).map((endpoint) => ({ endpoint, suffix: endpoint.method.toLowerCase(), scope: scopeOf(endpoint) }));

const BY_SUFFIX = new Map(REQUEST_CHANNELS.map((c) => [c.suffix, c]));

/** The channel's name for a market's wire id (`btcusdt`) or a coin, or alone. */
export function requestChannelName(channel: RequestChannel, prefix?: string): string {
  return channel.scope === 'account' ? channel.suffix : `${prefix ?? ''}_${channel.suffix}`;
}

/** A request channel named by a message: which, its name, and the `currency` it names (if any). */
export interface RequestTarget {
  readonly channel: RequestChannel;
  readonly name: string;
  /** The market's name (`btc_usdt`) or the coin as named (the endpoint's reader checks it). */
  readonly currency: string | undefined;
}

/**
 * The request channel `name` names, or undefined when it names none (a public or private
 * channel, or nothing). A request channel of a market that does not exist is refused here:
 * UNKNOWN_MARKET (3005); a coin's name is read by the endpoint's own reader (3005 when unknown).
 */
export function parseRequestChannel(markets: WireMarkets, name: string): RequestTarget | undefined {
  const bare = BY_SUFFIX.get(name);
  if (bare !== undefined && bare.scope === 'account') return { channel: bare, name, currency: undefined };
  const cut = name.indexOf('_');
  if (cut <= 0) return undefined;
  const prefix = name.slice(0, cut);
  const channel = BY_SUFFIX.get(name.slice(cut + 1));
  if (channel === undefined || channel.scope === 'account') return undefined;
  if (channel.scope === 'coin') return { channel, name, currency: prefix };
  const market = markets.find(prefix);
  if (market === undefined) {
    return refuse(
      'UNKNOWN_MARKET',
      `no market ${quoted(prefix)}: ${channel.suffix} channels name a market without its underscore, ` +
        `e.g. btcusdt_${channel.suffix}`,
    );
  }
  return { channel, name, currency: market.spec.name };
}

/** What serving requests needs: the signed API's services and the WebSocket's authenticator. */
export interface RequestServices extends ServingServices {
  readonly authenticator: Authenticator;
  /** The wall clock, for a strict key's nonce. */
  readonly wallClock: () => number;
}

/**
 * Serves one request: per-IP limit, the signature and the endpoint's permission (authorize), then
 * what REST does after authentication (serveAuthenticated). Resolves with the one frame that
 * answers it; never rejects.
 */
export async function serveRequest(
  services: RequestServices,
  target: RequestTarget,
  message: Readonly<Record<string, unknown>>,
  no: string,
  ip: string,
): Promise<string> {
  const { endpoint } = target.channel;
  const { log } = services;
  let key: ApiKeyRecord | undefined;
  try {
    const byIp = await services.limiter.hitIp(ip);
    if (!byIp.allowed) refuse('RATE_LIMITED', byIp.message);
    const auth = authorize(
      services.venue.engine,
      services.authenticator,
      message,
      { name: target.name, permission: endpoint.permission },
      ip,
      services.wallClock(),
    );
    if (!auth.ok) refuse(auth.result, auth.message);
    key = auth.key;
    const textOf = (m: Readonly<Record<string, unknown>>, name: string): string | undefined =>
      name === 'currency' && target.currency !== undefined ? target.currency : fieldText(m, name);
    return replyFrame(await serveAuthenticated(endpoint, services, key, message, textOf), no, target.name);
  } catch (error) {
    if (!(error instanceof Refusal))
      return replyFrame(faultReply(log, endpoint.method, error), no, target.name);
    const claimed = message['accesskey'];
    logRefusal(
      log,
      error.result,
      () => ({
        channel: target.name,
        ip,
        accessKey: key?.accessKey ?? (typeof claimed === 'string' ? claimed.slice(0, 64) : undefined),
      }),
      `refused ${target.name}: ${error.message}`,
    );
    return errorFrame(error.result, no, target.name, error.message);
  }
}

/**
 * The frame of an endpoint's reply: its body as `data` with code 1000 and success; a body with
 * another code (an error body) as the error frame's fields.
 */
function replyFrame(reply: ApiReply, no: string, channel: string): string {
  const body: unknown =
    'json' in reply
      ? reply.json
      : 'text' in reply
        ? JSON.parse(reply.text)
        : JSON.parse(Buffer.from(reply.body).toString('utf8'));
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof fields['code'] === 'number' ? fields['code'] : 1000;
  const text = typeof fields['message'] === 'string' ? fields['message'] : 'success';
  if (code !== 1000) return JSON.stringify({ no, code, success: false, channel, message: text });
  return JSON.stringify({ message: text, no, data: body, code, channel, success: true });
}
