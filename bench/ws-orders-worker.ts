/**
 * @module ws-orders-worker — the order load of bench:ws, in its own process: signed `orderMoreV2`
 * batches of `perBatch` limit orders at one price, sells and buys alternating, paced to
 * `batchesPerSecond` (sent on a 5 ms clock, catching up on the elapsed time), so that every buy
 * batch fills the sell batch before it: `perBatch` trades per two batches.
 *
 * argv: base buyerKey buyerSecret sellerKey sellerSecret batchesPerSecond perBatch price amount.
 * IPC: `{type:'count', ok, failed, inFlight}` every 250 ms; `{type:'stop'}` stops sending.
 */
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
  `${base}/api/orderMoreV2?${signedQuery(
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

function send(): void {
  const url = `${paths[sent % 2]}${Date.now()}`;
  sent++;
  inFlight++;
  fetch(url, { headers: { 'user-agent': TEST_USER_AGENT } })
    .then((r) => r.json() as Promise<{ code: number }>)
    .then(
      (body) => (body.code === 1000 ? ok++ : failed++),
      () => failed++,
    )
    .finally(() => inFlight--);
}

const clock = setInterval(() => {
  if (stopped) return;
  const due = Math.floor(((performance.now() - started) * rate) / 1000);
  while (sent < due && inFlight < MAX_IN_FLIGHT) send();
}, 5);

setInterval(() => process.send?.({ type: 'count', ok, failed, inFlight, sent }), 250);
process.on('message', (message: { type: string }) => {
  if (message.type === 'stop') {
    stopped = true;
    clearInterval(clock);
  }
});
