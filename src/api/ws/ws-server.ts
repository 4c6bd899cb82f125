/**
 * @module ws-server — the WebSocket API (docs/websocket.md): upgrades at `/websocket` and
 * `/websocket/<base>` on the HTTP server, reads subscriptions, answers `ping`, refuses bad input
 * with the reference's error frames, and writes each connection's pushes of a tick in one write.
 *
 * Messages in: JSON text frames `{"event":"addChannel"|"removeChannel","channel":…}` (single-quoted
 * pseudo-JSON too, as ZB's own demos sent), or the text `ping` (answered `pong`); protocol pings
 * are answered with pongs. Errors: `{"no":"0","code":<n>,"success":false,"channel":…,"message":…}`
 * with the codes of zb-api-facts §10.7 and §3 (1007 unknown or missing channel, 1008 missing or
 * unknown event or a message that is not JSON, 1003/3006/1012 signed-subscription refusals, 3005
 * bad parameters, 4002 floods). A successful subscription is answered by its snapshot, not by an
 * acknowledgement (ccxt routes every message with a `channel` to that channel's parser). A
 * request channel (`btcusdt_order`, `getaccountinfo`, …: requests.ts) is a signed REST endpoint
 * served over the WebSocket, answered once and subscribing nothing.
 *
 * Limits, so that no client can slow the others or grow memory: frames over `maxMessageBytes` are
 * closed with 1009 (by ws); more than `messageBurst` messages at once, or past
 * `messagesPerSecond`, get a 4002 frame and a 1008 close; at most `maxSubscriptions` a
 * connection; a connection whose unsent bytes pass `maxBufferedBytes` is dropped (a slow consumer);
 * one that does not answer a protocol ping within HEARTBEAT_MS is dropped.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import type { VenueState } from '../../sequencer/venue-ports.ts';
import { logRefusal } from '../../observability/refusal-levels.ts';
import type { Log } from '../../domain/log.ts';
import { errorText, quoted, Refusal } from '../edge/refusal.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import { TrustedProxies } from '../http/client-ip.ts';
import type { LiveKlines } from '../market-data/live-klines.ts';
import type { AppliedItem, MarketData } from '../market-data/market-data.ts';
import { parseChannel, WireMarkets, type Channel } from './channels.ts';
import { FanOut, type QueuedFrames, type Sink, type Subscription } from './fan-out.ts';
import { errorFrame } from './error-frame.ts';
import { authorize, privateTarget } from './private-auth.ts';
import { parseRequestChannel, serveRequest, type RequestServices, type RequestTarget } from './requests.ts';

/** The paths: `/websocket` for every channel, `/websocket/<base>` as ccxt connects for quick depth. */
export const WS_PATH = '/websocket';

export const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;
export const DEFAULT_MAX_MESSAGE_BYTES = 4096;
export const DEFAULT_MESSAGES_PER_SECOND = 60;
export const DEFAULT_MESSAGE_BURST = 120;
export const DEFAULT_MAX_SUBSCRIPTIONS = 256;
/** A protocol ping goes to each connection this often; one without a pong since the last is dropped (ms). */
export const HEARTBEAT_MS = 30_000;
/** Longest wait for clients to answer the closing handshake on shutdown before their sockets are cut (ms). */
const CLOSE_GRACE_MS = 1_000;
/** The longest `no` echoed back. */
const MAX_NO_LENGTH = 64;

export interface WsGatewayDeps {
  readonly engine: VenueState;
  readonly marketData: MarketData;
  readonly klines: LiveKlines;
  /** Opens API secrets (shares nothing with the REST authenticator but the sealer). */
  readonly authenticator: Authenticator;
  /** Venue time: the 24 h ticker window and pushes. */
  readonly now: () => number;
  /** The wall clock for signed subscriptions' reqTime and nonce (default `now`): a manual venue clock must not refuse them. */
  readonly wallClock?: () => number;
  /** Slow consumers dropped (warn), signed-subscription refusals (their levels), faults (error). */
  readonly log: Log;
  /** The signed API's services, for the request channels (requests.ts); absent: none is served (1007). */
  readonly requests?: RequestServices;
}

export interface WsGatewayOptions {
  /** Least time between two flushes under load (ms); default fan-out's DEFAULT_MIN_FLUSH_INTERVAL_MS. */
  readonly minFlushIntervalMs?: number;
  readonly maxBufferedBytes?: number;
  readonly maxMessageBytes?: number;
  readonly messagesPerSecond?: number;
  readonly messageBurst?: number;
  readonly maxSubscriptions?: number;
  /** Proxies whose X-Forwarded-For names the client (for IP-bound keys); default none. */
  readonly trustedProxies?: TrustedProxies;
}

/** One client connection: its subscriptions (by channel, and market for order records), its tick's frames. */
class Connection implements Sink {
  readonly ws: WebSocket;
  readonly socket: Duplex;
  readonly ip: string;
  queued: QueuedFrames | undefined = undefined;
  readonly subscriptions = new Map<string, Subscription>();
  #tokens: number;
  #refilledAt: number;
  alive = true;
  readonly #gateway: WsGateway;

  constructor(gateway: WsGateway, ws: WebSocket, socket: Duplex, ip: string, burst: number) {
    this.#gateway = gateway;
    this.ws = ws;
    this.socket = socket;
    this.ip = ip;
    this.#tokens = burst;
    this.#refilledAt = performance.now();
  }

  /** Takes one message's token from the bucket (`rate` a second, `burst` at most); false when empty. */
  take(rate: number, burst: number): boolean {
    const now = performance.now();
    this.#tokens = Math.min(burst, this.#tokens + ((now - this.#refilledAt) * rate) / 1000);
    this.#refilledAt = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  write(bytes: Buffer): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    if (this.ws.bufferedAmount > this.#gateway.maxBufferedBytes) {
      this.#gateway.dropSlow(this);
      return;
    }
    this.socket.write(bytes);
  }

  ended(subscription: Subscription, message: string): void {
    for (const [key, s] of this.subscriptions) if (s === subscription) this.subscriptions.delete(key);
    this.send(errorFrame('AUTH_FAILED', '0', subscription.channel.name, message));
  }

  send(text: string): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.#gateway.repliesSent++;
    this.ws.send(text);
  }
}

/**
 * A message's JSON object, or undefined. ZB's own Python and Java demos sent single-quoted
 * pseudo-JSON (`{'event':'addChannel',…}`), so a text with single quotes and no double quotes is
 * read with the quotes swapped.
 */
export function parseMessage(text: string): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (!text.includes("'") || text.includes('"')) return undefined;
    try {
      value = JSON.parse(text.replaceAll("'", '"'));
    } catch {
      return undefined;
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** A connection's name for a subscription: the channel, and the market for order records. */
function subscriptionKey(message: Readonly<Record<string, unknown>>, channel: string): string {
  return channel === 'push_user_incr_record' ? `${channel}:${String(message['market'])}` : channel;
}

/** See the module comment. */
export class WsGateway {
  readonly #deps: WsGatewayDeps;
  readonly #fanOut: FanOut;
  readonly #markets: WireMarkets;
  readonly #wss: WebSocketServer;
  readonly #connections = new Set<Connection>();
  readonly maxBufferedBytes: number;
  readonly #rate: number;
  readonly #burst: number;
  readonly #maxSubscriptions: number;
  readonly #heartbeat: NodeJS.Timeout;
  readonly #proxies: TrustedProxies;
  #closing = false;
  /** Slow consumers dropped since start. */
  dropped = 0;
  /** Messages sent one at a time (answers, refusals, pong) since start; pushes are `pushesSent`. */
  repliesSent = 0;
  /** Connections accepted since start. */
  accepted = 0;

  constructor(deps: WsGatewayDeps, options: WsGatewayOptions = {}) {
    this.#deps = deps;
    this.#proxies = options.trustedProxies ?? new TrustedProxies();
    this.#markets = new WireMarkets(deps.engine);
    this.#fanOut = new FanOut(
      { engine: deps.engine, marketData: deps.marketData, klines: deps.klines, now: deps.now },
      {
        log: (message) => deps.log.error(message),
        ...(options.minFlushIntervalMs === undefined
          ? {}
          : { minFlushIntervalMs: options.minFlushIntervalMs }),
      },
    );
    this.maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    this.#rate = options.messagesPerSecond ?? DEFAULT_MESSAGES_PER_SECOND;
    this.#burst = options.messageBurst ?? DEFAULT_MESSAGE_BURST;
    this.#maxSubscriptions = options.maxSubscriptions ?? DEFAULT_MAX_SUBSCRIPTIONS;
    this.#wss = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    });
    this.#heartbeat = setInterval(() => this.#beat(), HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  /** Open connections. */
  get connections(): number {
    return this.#connections.size;
  }

  /** Push messages (channel frames) written since start. */
  get pushesSent(): number {
    return this.#fanOut.framesWritten;
  }

  /** Takes each applied batch (an applied-feed listener, registered after the market data's). */
  readonly apply = (batch: readonly AppliedItem[]): void => this.#fanOut.apply(batch);

  /** A node:http server's `upgrade` listener: WebSocket upgrades on the API's paths (others get 404). */
  readonly upgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void =>
    this.#upgrade(request, socket, head);

  /** Serves WebSocket upgrades on `server`'s paths (other upgrade requests get 404). */
  attach(server: Server): void {
    server.on('upgrade', this.upgrade);
  }

  /** Closes every connection (1001, going away), cutting those that do not finish the handshake in time. */
  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#heartbeat);
    this.#fanOut.close();
    const open = [...this.#connections];
    const closed = open.map(
      (c) =>
        new Promise<void>((resolve) =>
          c.ws.readyState === WebSocket.CLOSED ? resolve() : c.ws.once('close', () => resolve()),
        ),
    );
    for (const c of open) c.ws.close(1001, 'server shutting down');
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)));
    await Promise.race([Promise.all(closed), grace]);
    clearTimeout(timer);
    for (const c of this.#connections) c.ws.terminate();
  }

  /** Drops a connection whose unsent bytes passed the bound. */
  dropSlow(connection: Connection): void {
    this.dropped++;
    this.#deps.log.warn(
      {
        ip: connection.ip,
        unsentBytes: connection.ws.bufferedAmount,
        maxBufferedBytes: this.maxBufferedBytes,
      },
      `dropped a slow consumer at ${connection.ip}`,
    );
    connection.ws.terminate();
  }

  #upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const url = request.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (this.#closing) return refuseUpgrade(socket, 503, 'Service Unavailable', 'server shutting down');
    if (path !== WS_PATH && !this.#isBasePath(path)) {
      return refuseUpgrade(
        socket,
        404,
        'Not Found',
        `no WebSocket endpoint at ${quoted(path)}: use ${WS_PATH}, or ${WS_PATH}/<base coin> for quick depth`,
      );
    }
    this.#wss.handleUpgrade(request, socket, head, (ws) => this.#connected(ws, socket, request));
  }

  /** `/websocket/<base>` with `<base>` the base coin of a market (ccxt's quick-depth URL). */
  #isBasePath(path: string): boolean {
    if (!path.startsWith(`${WS_PATH}/`)) return false;
    const base = path.slice(WS_PATH.length + 1);
    return this.#deps.engine.markets().some((m) => m.base === base);
  }

  #connected(ws: WebSocket, socket: Duplex, request: IncomingMessage): void {
    const ip = this.#proxies.clientAddress(
      request.socket.remoteAddress ?? '',
      request.headers['x-forwarded-for'],
    );
    const connection = new Connection(this, ws, socket, ip, this.#burst);
    this.#connections.add(connection);
    this.accepted++;
    ws.on('message', (data: RawData, isBinary: boolean) => {
      try {
        this.#message(connection, data, isBinary);
      } catch (error) {
        this.#deps.log.error({ ip, err: error }, `a message from ${ip} failed: answered 1002`);
        connection.send(errorFrame('INTERNAL_ERROR', '0', undefined));
      }
    });
    ws.on('pong', () => (connection.alive = true));
    // ws reports protocol errors (bad frames, oversize messages) here, then closes with the right code.
    ws.on('error', () => undefined);
    ws.on('close', () => {
      this.#connections.delete(connection);
      for (const subscription of connection.subscriptions.values()) this.#fanOut.unsubscribe(subscription);
      connection.subscriptions.clear();
    });
  }

  #message(connection: Connection, data: RawData, isBinary: boolean): void {
    if (!connection.take(this.#rate, this.#burst)) {
      connection.send(
        errorFrame(
          'RATE_LIMITED',
          '0',
          undefined,
          `at most ${this.#rate} messages a second (bursts of ${this.#burst})`,
        ),
      );
      connection.ws.close(1008, 'message rate exceeded');
      return;
    }
    // With ws's default binaryType a message arrives as one Buffer, however it was fragmented.
    const text = isBinary ? undefined : (data as Buffer).toString('utf8');
    if (text === 'ping') {
      connection.send('pong');
      return;
    }
    const message = text === undefined ? undefined : parseMessage(text);
    if (message === undefined) {
      connection.send(
        errorFrame(
          'WS_EVENT_EMPTY',
          '0',
          undefined,
          'send a JSON text frame {"event":"addChannel","channel":"btcusdt_ticker"} or the text ping',
        ),
      );
      return;
    }
    const rawNo = message['no'];
    const no =
      typeof rawNo === 'string' || typeof rawNo === 'number' ? String(rawNo).slice(0, MAX_NO_LENGTH) : '0';
    const event = message['event'];
    const channelName = typeof message['channel'] === 'string' ? message['channel'].slice(0, 100) : undefined;
    if (typeof event !== 'string' || event === '') {
      connection.send(
        errorFrame('WS_EVENT_EMPTY', no, channelName, 'send "event": "addChannel" or "removeChannel"'),
      );
      return;
    }
    if (event === 'removeChannel') {
      this.#remove(connection, message, no, channelName);
      return;
    }
    if (event !== 'addChannel') {
      connection.send(
        errorFrame(
          'WS_EVENT_EMPTY',
          no,
          channelName,
          `unknown event ${quoted(event)}: use addChannel or removeChannel`,
        ),
      );
      return;
    }
    this.#add(connection, message, no, channelName);
  }

  #add(
    connection: Connection,
    message: Record<string, unknown>,
    no: string,
    channelName: string | undefined,
  ): void {
    let channel: Channel;
    let request: RequestTarget | undefined;
    try {
      const name = message['channel'];
      const { requests } = this.#deps;
      request =
        requests === undefined || typeof name !== 'string'
          ? undefined
          : parseRequestChannel(this.#markets, name);
      if (requests !== undefined && request !== undefined) {
        void serveRequest(requests, request, message, no, connection.ip).then((frame) =>
          connection.send(frame),
        );
        return;
      }
      channel = parseChannel(this.#markets, message);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      connection.send(errorFrame(error.result, no, channelName, error.message));
      return;
    }
    const key = subscriptionKey(message, channel.name);
    const previous = connection.subscriptions.get(key);
    if (previous === undefined && connection.subscriptions.size >= this.#maxSubscriptions) {
      connection.send(
        errorFrame(
          'INVALID_PARAMETER',
          no,
          channel.name,
          `at most ${this.#maxSubscriptions} subscriptions a connection`,
        ),
      );
      return;
    }
    let grant;
    if (channel.kind.startsWith('push_user_')) {
      const auth = authorize(
        this.#deps.engine,
        this.#deps.authenticator,
        message,
        privateTarget(channel as never),
        connection.ip,
        (this.#deps.wallClock ?? this.#deps.now)(),
      );
      if (!auth.ok) {
        logRefusal(
          this.#deps.log,
          auth.result,
          () => ({ ip: connection.ip, channel: channel.name }),
          `refused a subscription to ${channel.name}: ${auth.message}`,
        );
        connection.send(errorFrame(auth.result, no, channel.name, auth.message));
        return;
      }
      grant = auth.value;
    }
    if (previous !== undefined) this.#fanOut.unsubscribe(previous);
    connection.subscriptions.set(key, this.#fanOut.subscribe(connection, channel, grant));
  }

  #remove(
    connection: Connection,
    message: Record<string, unknown>,
    no: string,
    channelName: string | undefined,
  ): void {
    if (channelName === undefined || channelName === '') {
      connection.send(errorFrame('WS_CHANNEL_EMPTY', no, undefined, 'send "channel": the channel to leave'));
      return;
    }
    const key = subscriptionKey(message, channelName);
    const subscription = connection.subscriptions.get(key);
    if (subscription === undefined) {
      connection.send(
        errorFrame('WS_CHANNEL_EMPTY', no, channelName, `not subscribed to ${quoted(channelName)}`),
      );
      return;
    }
    connection.subscriptions.delete(key);
    this.#fanOut.unsubscribe(subscription);
  }

  #beat(): void {
    for (const c of this.#connections) {
      if (!c.alive) {
        c.ws.terminate();
        continue;
      }
      c.alive = false;
      c.ws.ping();
    }
  }
}

/** Answers an upgrade request that will not be upgraded with a small JSON body and closes it. */
function refuseUpgrade(socket: Duplex, status: number, reason: string, detail: string): void {
  const body = errorText('GENERAL_ERROR', detail);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
