/**
 * @module venue-trader-worker — the signed traders of bench:venue, in a process of their own:
 * `streams` (venue-load.ts), each a seller and a buyer on one market and account kind, run cycles
 * of orders over HTTP (keep-alive, each trader from its own loopback address, as distinct clients
 * would) and hold one WebSocket each, subscribed to its private channels.
 *
 * A cycle, its four chains sent at once, each chain's steps one after the other:
 * 1. batches (streams with `batches`): the seller's orderMoreV2 of 20 sells at the price, then the
 *    buyer's 20 buys at it (20 trades);
 * 2. the seller's limit sell at the price, then the buyer's IOC buy at it (a trade);
 * 3. the seller's PostOnly sell above the price, then its cancel;
 * 4. the buyer's limit buy below the price, then its cancel.
 * Sellers only sell and buyers only buy, and every buy follows its sell's acknowledgement, so
 * every buy at the price finds sells to take (no resting buys there, no self-trades) and the book
 * stays small. `express` streams send single orders only, all with enableExpress=1.
 *
 * Cycles start on a 5 ms clock so that the orders started track `{type:'rate', ordersPerSecond}`
 * (open loop: a late reply does not delay the next cycle), round robin over the streams, up to
 * MAX_CYCLES_IN_FLIGHT at once. After `{type:'measure'}` every reply's time is kept (from the
 * request's creation to its last byte, so time queued for a socket counts), split into order
 * and cancel acknowledgements, with the private pushes' latency (from the trade time the record
 * carries to its arrival). `{type:'report'}` answers with them and the counts, and the sampled
 * trade times (trade ids ending in 0) seen since the previous report, for the public pushes'
 * latency. `{type:'stop'}` ends the process.
 *
 * argv: one JSON TraderWorkerConfig.
 */
import { Agent, request } from 'node:http';
import WebSocket from 'ws';
import { signedQuery, TEST_USER_AGENT } from '../test/fixtures/zb-client.ts';
import { signedSubscription } from '../test/fixtures/ws-client.ts';
import type { StreamSpec, TraderSpec, TraderWorkerConfig } from './venue-load.ts';

const config = JSON.parse(process.argv[2] ?? '{}') as TraderWorkerConfig;
const target = new URL(config.base);
/** Cycles outstanding at once, beyond which the worker stops starting them (and says so). */
const MAX_CYCLES_IN_FLIGHT = 2_000;
const agent = new Agent({ keepAlive: true, maxSockets: 32 });
const now = (): number => performance.timeOrigin + performance.now();

interface Counts {
  ordersAcked: number;
  ordersRefused: number;
  cancelsAcked: number;
  cancelsRefused: number;
  /** Replies other than code 1000, by code (or 'http <status>' / 'connection'). */
  refusals: Record<string, number>;
  privateMessages: number;
  cyclesSkipped: number;
}
const zero = (): Counts => ({
  ordersAcked: 0,
  ordersRefused: 0,
  cancelsAcked: 0,
  cancelsRefused: 0,
  refusals: {},
  privateMessages: 0,
  cyclesSkipped: 0,
});
let counts = zero();
/** Orders acknowledged since the start (never reset: the parent's per-second rate). */
let totalAcked = 0;
let measuring = false;
let orderAckMs: number[] = [];
let cancelAckMs: number[] = [];
let privateMs: number[] = [];
/** Sampled trade id → trade time (ms), since the last report. */
let tradeTimes: number[] = [];
const seenTids = new Set<number>();

/** One signed GET; resolves with the parsed reply (or a refusal record). */
function call(trader: TraderSpec, method: string, params: readonly [string, string][]): Promise<Reply> {
  const path = `/api/${method}?${signedQuery(method, params, trader.accessKey, trader.secret)}`;
  return new Promise((resolve) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path,
        agent,
        localAddress: trader.address,
        headers: { 'user-agent': TEST_USER_AGENT },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          if (res.statusCode !== 200 && !body.startsWith('{')) {
            resolve({ ok: false, code: `http ${res.statusCode}`, body });
            return;
          }
          try {
            const json = JSON.parse(body) as Record<string, unknown>;
            const code = String(json['code'] ?? (json['message'] as { code?: unknown } | undefined)?.code);
            resolve(code === '1000' ? { ok: true, json } : { ok: false, code, body });
          } catch {
            resolve({ ok: false, code: `http ${res.statusCode}`, body });
          }
        });
      },
    );
    req.on('error', () => resolve({ ok: false, code: 'connection', body: '' }));
    req.end();
  });
}

type Reply =
  | { readonly ok: true; readonly json: Record<string, unknown> }
  | { readonly ok: false; readonly code: string; readonly body: string };

let loggedRefusals = 0;
/** Times one request as an order (`orders` placed) or a cancel acknowledgement. */
async function timed(
  kind: 'order' | 'cancel',
  orders: number,
  trader: TraderSpec,
  method: string,
  params: readonly [string, string][],
): Promise<Reply> {
  const timedNow = measuring;
  const at = performance.now();
  const reply = await call(trader, method, params);
  if (timedNow) (kind === 'order' ? orderAckMs : cancelAckMs).push(performance.now() - at);
  if (reply.ok) {
    if (kind === 'order') {
      counts.ordersAcked += orders;
      totalAcked += orders;
    } else counts.cancelsAcked++;
  } else {
    if (kind === 'order') counts.ordersRefused += orders;
    else counts.cancelsRefused++;
    counts.refusals[reply.code] = (counts.refusals[reply.code] ?? 0) + 1;
    if (loggedRefusals++ < 5) console.error(`venue trader: ${method} refused: ${reply.body.slice(0, 300)}`);
  }
  return reply;
}

const account = (trader: TraderSpec): [string, string][] => [
  ...(trader.acctType === 0 ? [] : ([['acctType', String(trader.acctType)]] as [string, string][])),
  ...(trader.express ? ([['enableExpress', '1']] as [string, string][]) : []),
];

function single(
  s: StreamSpec,
  trader: TraderSpec,
  side: '0' | '1',
  price: string,
  orderType?: '1' | '2',
): Promise<Reply> {
  return timed('order', 1, trader, 'order', [
    ['currency', s.market],
    ['tradeType', side],
    ['price', price],
    ['amount', s.amount],
    ...account(trader),
    ...(orderType === undefined ? [] : ([['orderType', orderType]] as [string, string][])),
  ]);
}

function batch(s: StreamSpec, trader: TraderSpec, side: '0' | '1'): Promise<Reply> {
  const pairs = `[${Array.from({ length: s.batchSize }, () => `[${s.price},${s.amount}]`).join(',')}]`;
  return timed('order', s.batchSize, trader, 'orderMoreV2', [
    ['market', s.market],
    ['tradeParams', pairs],
    ['tradeType', side],
    ...(trader.acctType === 0 ? [] : ([['acctType', String(trader.acctType)]] as [string, string][])),
  ]);
}

async function placeAndCancel(
  s: StreamSpec,
  trader: TraderSpec,
  side: '0' | '1',
  price: string,
): Promise<void> {
  const placed = await single(s, trader, side, price, side === '0' ? '1' : undefined);
  if (!placed.ok) return;
  await timed('cancel', 0, trader, 'cancelOrder', [
    ['currency', s.market],
    ['id', String(placed.json['id'])],
  ]);
}

/** Orders one cycle of `s` places. */
export const ordersPerCycle = (s: StreamSpec): number => (s.batches ? 2 * s.batchSize : 0) + 4;

async function cycle(s: StreamSpec): Promise<void> {
  const chains: Promise<unknown>[] = [
    single(s, s.seller, '0', s.price).then((r) => (r.ok ? single(s, s.buyer, '1', s.price, '2') : r)),
    placeAndCancel(s, s.seller, '0', s.priceAbove),
    placeAndCancel(s, s.buyer, '1', s.priceBelow),
  ];
  if (s.batches) {
    chains.push(batch(s, s.seller, '0').then((r) => (r.ok ? batch(s, s.buyer, '1') : r)));
  }
  await Promise.all(chains);
}

// The private channels: one connection per trader.
function subscribePrivate(trader: TraderSpec, markets: readonly string[]): WebSocket {
  const ws = new WebSocket(`${config.base.replace('http', 'ws')}/websocket`, {
    localAddress: trader.address,
    headers: { 'user-agent': TEST_USER_AGENT },
  });
  ws.on('open', () => {
    const send = (channel: string, extra: Record<string, unknown> = {}): void =>
      ws.send(JSON.stringify(signedSubscription(channel, trader.accessKey, trader.secret, extra)));
    for (const market of markets)
      send('push_user_incr_record', { market: `${market.replace('_', '')}default` });
    send('push_user_incr_asset');
    if (trader.acctType === 2) send('push_user_cross_asset');
  });
  ws.on('message', (data: Buffer) => {
    const arrived = now();
    counts.privateMessages++;
    const text = data.toString();
    if (!text.includes('"userIncrRecord"')) return;
    const m = JSON.parse(text) as { record?: number[]; records?: number[][] };
    for (const record of m.record === undefined ? (m.records ?? []) : [m.record]) {
      const tid = record[13] as number;
      const time = record[16] as number;
      if (!(tid > 0) || seenTids.has(tid)) continue;
      seenTids.add(tid);
      if (seenTids.size > 200_000) seenTids.clear();
      if (measuring) privateMs.push(arrived - time);
      if (tid % 10 === 0) tradeTimes.push(tid, time);
    }
  });
  ws.on('error', (error) => console.error(`venue trader: private WebSocket: ${error.message}`));
  return ws;
}

const sockets: WebSocket[] = [];
const marketsOf = new Map<TraderSpec, Set<string>>();
for (const s of config.streams) {
  for (const t of [s.seller, s.buyer]) {
    const known = [...marketsOf.keys()].find((k) => k.accessKey === t.accessKey) ?? t;
    if (!marketsOf.has(known)) marketsOf.set(known, new Set());
    marketsOf.get(known)?.add(s.market);
  }
}
for (const [trader, markets] of marketsOf) sockets.push(subscribePrivate(trader, [...markets]));

let ordersPerSecond = 0;
let rateSince = performance.now();
let ordersStarted = 0;
let next = 0;
let inFlight = 0;
setInterval(() => {
  if (ordersPerSecond <= 0 || config.streams.length === 0) return;
  const due = ((performance.now() - rateSince) * ordersPerSecond) / 1000;
  while (ordersStarted < due) {
    const s = config.streams[next++ % config.streams.length] as StreamSpec;
    ordersStarted += ordersPerCycle(s);
    if (inFlight >= MAX_CYCLES_IN_FLIGHT) {
      counts.cyclesSkipped++;
      continue;
    }
    inFlight++;
    void cycle(s).finally(() => inFlight--);
  }
}, 5);

setInterval(() => {
  const cpu = process.cpuUsage();
  process.send?.({
    type: 'count',
    ordersAcked: totalAcked,
    inFlight,
    ready: sockets.filter((ws) => ws.readyState === WebSocket.OPEN).length,
    cpuMicros: cpu.user + cpu.system,
  });
}, 250);

process.on('message', (message: { type: string; ordersPerSecond?: number }) => {
  if (message.type === 'rate') {
    ordersPerSecond = message.ordersPerSecond ?? 0;
    rateSince = performance.now();
    ordersStarted = 0;
  } else if (message.type === 'measure') {
    measuring = true;
    counts = zero();
    orderAckMs = [];
    cancelAckMs = [];
    privateMs = [];
  } else if (message.type === 'report') {
    measuring = false;
    process.send?.({ type: 'report', counts, orderAckMs, cancelAckMs, privateMs, tradeTimes, inFlight });
    tradeTimes = [];
  } else if (message.type === 'stop') {
    for (const ws of sockets) ws.terminate();
    process.exit(0);
  }
});
