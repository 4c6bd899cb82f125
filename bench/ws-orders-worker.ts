/**
 * @module ws-orders-worker — the order load of bench:ws, in its own process: signed `orderMoreV2`
 * batches of `perBatch` limit orders at one price, sells and buys alternating, paced to
 * `batchesPerSecond` (sent on a 5 ms clock, catching up on the elapsed time), so that every buy
 * batch fills the sell batch before it: `perBatch` trades per two batches. Plain node:http with
 * keep-alive (fetch cost this process twice the CPU, on a machine it shares with the server).
 *
 * argv: base buyerKey buyerSecret sellerKey sellerSecret batchesPerSecond perBatch price amount.
 * IPC: `{type:'count', ok, failed, inFlight, cpuMicros}` every 250 ms; after `{type:'measure'}`
 * each reply's time is recorded, `{type:'replies'}` answers with their p50 and p99 (ms) and
 * count (`{type:'replies', reset: true}` then forgets them: bench:soak's per-minute figures);
 * `{type:'stop'}` stops sending.
 */
import { Agent, request } from 'node:http';
import { signedQuery, TEST_USER_AGENT } from '../test/fixtures/zb-client.ts';

const [
  base = '',
  buyerKey = '',
  buyerSecret = '',
  sellerKey = '',
  sellerSecret = '',
  rateText = '0',
  perText = '20',
  price = '30000.00',
  amount = '0.0100',
] = process.argv.slice(2);
const rate = Number(rateText);
const perBatch = Number(perText);
/** Requests in flight beyond which sending pauses (the server answers busy long before). */
const MAX_IN_FLIGHT = 1_000;

const tradeParams = JSON.stringify(Array.from({ length: perBatch }, () => [price, amount])).replaceAll(
  '"',
  '',
);
// The signature does not cover reqTime: each side's request is signed once and sent with a fresh reqTime.
const paths = [
  [sellerKey, sellerSecret, '0'],
  [buyerKey, buyerSecret, '1'],
].map(([key, secret, side]) =>
  `/api/orderMoreV2?${signedQuery(
    'orderMoreV2',
    [
      ['market', 'btc_usdt'],
      ['tradeParams', tradeParams],
      ['tradeType', side as string],
    ],
    key as string,
    secret as string,
  )}`.replace(/&reqTime=\d+$/, '&reqTime='),
);

let sent = 0;
let ok = 0;
let failed = 0;
let inFlight = 0;
let stopped = false;
const started = performance.now();

const target = new URL(base);
const agent = new Agent({ keepAlive: true, maxSockets: 32 });

/** Reply times (ms) of the requests sent after `{type:'measure'}`: durability + apply + HTTP. */
const replyMs: number[] = [];
let measuring = false;

function send(): void {
  const path = `${paths[sent % 2]}${Date.now()}`;
  sent++;
  inFlight++;
  const at = performance.now();
  const timed = measuring;
  const done = (success: boolean): void => {
    if (timed) replyMs.push(performance.now() - at);
    inFlight--;
    if (success) ok++;
    else failed++;
  };
  const req = request(
    { host: target.hostname, port: target.port, path, agent, headers: { 'user-agent': TEST_USER_AGENT } },
    (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => done(body.startsWith('{"code":1000')));
    },
  );
  req.on('error', () => done(false));
  req.end();
}

const clock = setInterval(() => {
  if (stopped) return;
  const due = Math.floor(((performance.now() - started) * rate) / 1000);
  while (sent < due && inFlight < MAX_IN_FLIGHT) send();
}, 5);

setInterval(() => {
  const cpu = process.cpuUsage();
  process.send?.({ type: 'count', ok, failed, inFlight, sent, cpuMicros: cpu.user + cpu.system });
}, 250);
process.on('message', (message: { type: string }) => {
  if (message.type === 'measure') measuring = true;
  if (message.type === 'replies') {
    replyMs.sort((a, b) => a - b);
    const at = (p: number): number =>
      replyMs[Math.min(replyMs.length - 1, Math.ceil(p * replyMs.length) - 1)] ?? NaN;
    process.send?.({ type: 'replies', p50: at(0.5), p99: at(0.99), count: replyMs.length });
    // bench:soak asks each minute for that minute's replies only.
    if ((message as { reset?: boolean }).reset === true) replyMs.length = 0;
  }
  if (message.type === 'stop') {
    stopped = true;
    clearInterval(clock);
  }
});
