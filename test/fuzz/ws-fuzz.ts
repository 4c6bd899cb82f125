/**
 * @module ws-fuzz — the WebSocket request channels' fuzz suite (zb-api-facts §10.9): the HTTP fuzz
 * suite's venue and request generator (http-fuzz.ts) over a catalogue derived from the same
 * declarations (REQUEST_CHANNELS: the signed endpoints served over the WebSocket, with their
 * catalogue entries' good values), sent as signed messages to a real gateway over a real socket.
 * Every answer must be one frame echoing the request's `no` and `channel`, with a code from the
 * registry (never 1002), `success` exactly when it is 1000 (and then `data`), a message free of
 * internal names; every refusal must leave the engine's state hash unchanged.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import fc from 'fast-check';
import { Authenticator } from '../../src/api/auth/authenticate.ts';
import { MemoryRateLimiter } from '../../src/api/auth/rate-limit.ts';
import {
  hmacMd5Hex,
  secretHash,
  wsSignedText,
  wsSignedTextAllStrings,
} from '../../src/api/auth/signature.ts';
import { LiveKlines } from '../../src/api/market-data/live-klines.ts';
import { REQUEST_CHANNELS, requestChannelName, type RequestChannel } from '../../src/api/ws/requests.ts';
import { WsGateway } from '../../src/api/ws/ws-server.ts';
import { RESULTS } from '../../src/domain/result-codes.ts';
import { memoryLog } from '../../src/observability/memory-log.ts';
import { WsTestClient, type Message } from '../fixtures/ws-client.ts';
import {
  CODES,
  INTERNAL,
  requests,
  resolve,
  stateHash,
  type Endpoint,
  type FuzzRequest,
  type FuzzTarget,
} from './http-fuzz.ts';

/** Channel prefixes: good markets and coins, and near misses (the channel names them, not `currency`). */
const PREFIXES: Readonly<Record<RequestChannel['scope'], readonly string[]>> = {
  market: ['btcusdt', 'zbqc', 'nosuchusdt'],
  coin: ['usdt', 'btc', 'doge'],
  account: [''],
};
/** The channels that check the fund password (a wrong one is counted, as it must be); scrypt is slow. */
const PASSWORD_METHODS = new Set(['withdraw', 'cancelWithdraw']);

/** A catalogue entry of a request channel: the channel's name as its path, its endpoint's method. */
export interface WsEndpoint extends Endpoint {
  readonly method: string;
}

/**
 * The request channels' catalogue, derived from the declarations: each channel of REQUEST_CHANNELS
 * with each prefix, its parameters the HTTP catalogue's entry for its endpoint less `currency`
 * (which the channel's name gives).
 */
export function wsCatalog(target: FuzzTarget): WsEndpoint[] {
  return REQUEST_CHANNELS.flatMap((channel) => {
    const { method } = channel.endpoint;
    const entry = target.endpoints.find((e) => e.path === `/api/${method}`);
    assert.ok(entry !== undefined, `${method} is not in the HTTP catalogue`);
    const params = Object.fromEntries(Object.entries(entry.params).filter(([name]) => name !== 'currency'));
    return PREFIXES[channel.scope].map((prefix): WsEndpoint => ({
      ...entry,
      path: requestChannelName(channel, prefix),
      method,
      params,
      optional: (entry.optional ?? []).filter((name) => name !== 'currency'),
      weight: PASSWORD_METHODS.has(method) ? 0.3 : 1,
    }));
  });
}

/** A gateway serving the target's venue on a real socket, and a connection to it. */
export interface WsFuzzTarget {
  readonly target: FuzzTarget;
  readonly endpoints: readonly WsEndpoint[];
  readonly client: WsTestClient;
  readonly errors: () => string[];
  close(): Promise<void>;
}

export async function wsFuzzTarget(target: FuzzTarget): Promise<WsFuzzTarget> {
  const { venue, sealer } = target;
  const log = memoryLog('error');
  const authenticator = new Authenticator(venue, sealer);
  const now = (): number => venue.time;
  const gateway = new WsGateway(
    {
      engine: venue.engine,
      marketData: venue.marketData,
      klines: new LiveKlines(),
      authenticator,
      now,
      log: log.log,
      requests: {
        venue,
        authenticator,
        limiter: new MemoryRateLimiter({ clock: now }),
        historyWaitMs: 2_000,
        sealer,
        log: log.log,
        wallClock: now,
      },
    },
    { messagesPerSecond: 100_000, messageBurst: 100_000, maxMessageBytes: 64 * 1024 },
  );
  const server: Server = createServer((_, response) => response.end());
  gateway.attach(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const client = await WsTestClient.connect(`ws://127.0.0.1:${port}/websocket`);
  return {
    target,
    endpoints: wsCatalog(target),
    client,
    errors: log.messages,
    close: async () => {
      await client.close();
      await gateway.close();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** A value as JSON would carry it: with `raw` encoding, a number where the text is one. */
function fieldValue(text: string, typed: boolean): unknown {
  if (!typed || !/^-?\d+(\.\d+)?$/.test(text)) return text;
  const n = Number(text);
  return Number.isFinite(n) && String(n) === text ? n : text;
}

let sent = 0;

/** The message of a generated request (`raw` encoding: numeric values as JSON numbers), signed as its `sign` says. */
function messageOf(t: WsFuzzTarget, r: FuzzRequest, no: string): Record<string, unknown> {
  const typed = r.encoding === 'raw';
  const message: Record<string, unknown> = { event: 'addChannel', channel: r.endpoint.path, no };
  for (const [name, value] of r.params) message[name] = fieldValue(resolve(t.target, value), typed);
  const key = r.key === 'unknown' ? { accessKey: 'nobody-0000-0000', secret: 'x' } : t.target.keys[r.key];
  message['event'] = 'addChannel';
  message['channel'] = r.endpoint.path;
  message['no'] = no;
  message['accesskey'] = key.accessKey;
  if (r.nonce !== 'none') message['nonce'] = r.nonce === 'fresh' ? t.target.venue.time : 'soon';
  delete message['sign'];
  // `decoded`: the sorted compact JSON; `raw`: its all-strings variant (ZB's Python demo).
  if (r.sign === 'decoded' || r.sign === 'raw') {
    const text = r.sign === 'decoded' ? wsSignedText(message) : wsSignedTextAllStrings(message);
    message['sign'] = hmacMd5Hex(secretHash(key.secret), text);
  } else if (r.sign === 'wrong') message['sign'] = '0123456789abcdef0123456789abcdef';
  return message;
}

/** Sends one generated request and checks its one answer; throws naming the request on the first broken rule. */
export async function sendAndCheckWs(t: WsFuzzTarget, r: FuzzRequest): Promise<number> {
  const { venue } = t.target;
  venue.time += 20;
  const before = venue.engine.snapshot();
  const no = `f${++sent}`;
  const message = messageOf(t, r, no);
  t.client.send(message);
  const frame: Message = await t.client.take((m) => m?.no === no, 10_000, `the answer to ${no}`);
  const where = (): string =>
    `${JSON.stringify(message).slice(0, 1_500)} → ${JSON.stringify(frame).slice(0, 500)}`;
  assert.equal(typeof frame, 'object', `not JSON: ${where()}`);
  assert.equal(frame.channel, r.endpoint.path, `channel not echoed: ${where()}`);
  const code = frame.code as number;
  assert.ok(CODES.has(code), `code ${code} is not the interface's: ${where()}`);
  assert.notEqual(code, RESULTS.INTERNAL_ERROR.code, `an internal error: ${where()}`);
  assert.equal(frame.success, code === 1000, `success and code disagree: ${where()}`);
  assert.equal('data' in frame, code === 1000, `data only on success: ${where()}`);
  const said = typeof frame.message === 'string' ? frame.message : JSON.stringify(frame.message ?? '');
  const input = JSON.stringify(message);
  for (const internal of INTERNAL)
    assert.ok(
      !said.includes(internal) || input.includes(internal),
      `the message leaks '${internal}': ${where()}`,
    );
  if (code !== 1000 && venue.engine.lastSeq !== before.lastSeq) {
    const method = (r.endpoint as WsEndpoint).method;
    const passwordAttempt =
      PASSWORD_METHODS.has(method) &&
      (code === RESULTS.FUND_PASSWORD_WRONG.code || code === RESULTS.FUND_PASSWORD_LOCKED.code);
    assert.equal(
      stateHash(t.target, venue.engine.snapshot(), passwordAttempt),
      stateHash(t.target, before, passwordAttempt),
      `a refusal changed the state: ${where()}`,
    );
  }
  return code;
}

/** Runs `count` requests drawn with `seed`; checks the engine's invariants every 100 and at the end. */
export async function fuzzWs(
  t: WsFuzzTarget,
  count: number,
  seed: number,
): Promise<Map<string, Map<number, number>>> {
  const seen = new Map<string, Map<number, number>>();
  const drawn = fc.sample(requests(t.endpoints), { numRuns: count, seed });
  for (const [i, r] of drawn.entries()) {
    let code: number;
    try {
      code = await sendAndCheckWs(t, r);
    } catch (error) {
      (error as Error).message = `seed ${seed}, request ${i}: ${(error as Error).message}`;
      throw error;
    }
    const codes = seen.get(r.endpoint.path) ?? new Map<number, number>();
    codes.set(code, (codes.get(code) ?? 0) + 1);
    seen.set(r.endpoint.path, codes);
    if (i % 100 === 99) t.target.venue.engine.assertInvariants();
  }
  t.target.venue.engine.assertInvariants();
  assert.deepEqual(t.errors(), [], 'no request failed unexpectedly');
  return seen;
}
