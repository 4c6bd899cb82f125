/**
 * @module venue-poller-worker — bench:venue's REST pollers, in a process of their own: one poller
 * per market, each from its own loopback address, asking for the ticker and the 50-level depth
 * every POLL_MS and the 1min klines every KLINE_MS (the kline endpoint allows one request per
 * second per address), one request at a time per endpoint. Counts the replies that are 200 with
 * a JSON body and the others.
 *
 * argv: base marketsJson addressesJson. IPC: `{type:'report'}` answers with the counts and reply
 * times (ms) since the previous report; `{type:'stop'}` ends the process.
 */
import { Agent, request } from 'node:http';
import { TEST_USER_AGENT } from '../test/fixtures/zb-client.ts';

const POLL_MS = 200;
const KLINE_MS = 1_100;
const [base = '', marketsJson = '[]', addressesJson = '[]'] = process.argv.slice(2);
const markets = JSON.parse(marketsJson) as string[];
const addresses = JSON.parse(addressesJson) as string[];
const target = new URL(base);
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

let ok = 0;
let failed = 0;
let replyMs: number[] = [];

function get(path: string, localAddress: string): Promise<void> {
  const at = performance.now();
  return new Promise((resolve) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path,
        agent,
        localAddress,
        headers: { 'user-agent': TEST_USER_AGENT },
      },
      (res) => {
        let first = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (first === '') first = chunk;
        });
        res.on('end', () => {
          replyMs.push(performance.now() - at);
          if (res.statusCode === 200 && (first.startsWith('{') || first.startsWith('['))) ok++;
          else failed++;
          resolve();
        });
      },
    );
    req.on('error', () => {
      failed++;
      resolve();
    });
    req.end();
  });
}

function every(ms: number, poll: () => Promise<void>): void {
  let busy = false;
  setInterval(() => {
    if (busy) return;
    busy = true;
    void poll().finally(() => (busy = false));
  }, ms);
}

markets.forEach((market, i) => {
  const address = addresses[i % addresses.length] ?? '127.0.0.1';
  every(POLL_MS, () => get(`/data/v1/ticker?market=${market}`, address));
  every(POLL_MS, () => get(`/data/v1/depth?market=${market}&size=50`, address));
  every(KLINE_MS, () => get(`/data/v1/kline?market=${market}&type=1min&size=100`, address));
});

process.on('message', (message: { type: string }) => {
  if (message.type === 'report') {
    process.send?.({ type: 'report', ok, failed, replyMs });
    ok = 0;
    failed = 0;
    replyMs = [];
  } else if (message.type === 'stop') {
    process.exit(0);
  }
});
