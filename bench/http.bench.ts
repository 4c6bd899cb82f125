/**
 * @module http.bench — the HTTP API under load from autocannon on the same machine:
 * 1. baseline: a bare node:http hello-world server;
 * 2. signed order placement (GET /api/order, ZB signature checked, journal with fdatasync group
 *    commit, reply after durability), buys and sells alternating on each connection so the book
 *    stays small and half the orders trade;
 * 3. public depth and ticker.
 * Each server runs in its own process; autocannon runs in this one. Reports requests/s (median of
 * the per-second samples) and latency percentiles, and Bourse's orders/s ÷ hello-world requests/s.
 * The last line is one JSON object. Rate limits are switched off (`--rate-limits=false`): the
 * spec's 60 requests/s per key would otherwise need 500+ keys for this load.
 * `HTTP_BENCH_RUNS=orders` (say) makes only some runs, e.g. to profile the server under one load.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { startServer } from '../test/fixtures/server-process.ts';
import { admin, createTrader, signedQuery, TEST_USER_AGENT } from '../test/fixtures/zb-client.ts';

const CONNECTIONS = Number(process.env['HTTP_BENCH_CONNECTIONS'] ?? 100);
const SECONDS = Number(process.env['HTTP_BENCH_SECONDS'] ?? 10);
/** Which runs to make (comma-separated: hello, orders, depth, ticker); default all. */
const ALL_RUNS = ['hello', 'orders', 'depth', 'ticker'];
const RUNS = new Set((process.env['HTTP_BENCH_RUNS'] ?? ALL_RUNS.join(',')).split(','));
const unknownRuns = [...RUNS].filter((run) => !ALL_RUNS.includes(run));
if (unknownRuns.length > 0) {
  throw new Error(`HTTP_BENCH_RUNS: unknown run ${unknownRuns.join(', ')}; runs are ${ALL_RUNS.join(', ')}`);
}
const skipped = (): Promise<Figures | undefined> => Promise.resolve(undefined);

interface Figures {
  readonly rps: number;
  readonly rpsMean: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  readonly non2xx: number;
  readonly total: number;
}

async function load(url: string, options: Partial<autocannon.Options> = {}): Promise<Figures> {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { 'user-agent': TEST_USER_AGENT },
    ...options,
  });
  return {
    rps: result.requests.p50,
    rpsMean: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    total: result.requests.total,
  };
}

const line = (name: string, f: Figures | undefined): string =>
  f === undefined
    ? `${name.padEnd(26)} not run`
    : `${name.padEnd(26)} ${String(f.rps).padStart(7)} req/s median (mean ${f.rpsMean}), latency p50 ${f.p50} ms, p99 ${f.p99} ms, errors ${f.errors + f.non2xx}`;

async function helloWorld(): Promise<Figures> {
  const code =
    "require('node:http').createServer((q,s)=>{s.writeHead(200,{'content-type':'application/json'});s.end('{\"hello\":\"world\"}')}).listen(0,'127.0.0.1',function(){console.log('port '+this.address().port)})";
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) =>
    child.stdout.on('data', (d: Buffer) => {
      const m = /port (\d+)/.exec(d.toString());
      if (m !== null) resolve(Number(m[1]));
    }),
  );
  try {
    await load(`http://127.0.0.1:${port}/api/order`, { duration: 2 });
    return await load(`http://127.0.0.1:${port}/api/order`);
  } finally {
    child.kill();
  }
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(import.meta.dirname, '..', '.bench-tmp-http-'));
  console.log(
    `bench:http — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model}, load average ${loadavg()[0]?.toFixed(2)}, ` +
      `${CONNECTIONS} connections, ${SECONDS} s per run, autocannon in this process, each server in its own`,
  );
  try {
    const hello = RUNS.has('hello') ? await helloWorld() : undefined;
    console.log(line('hello world (node:http)', hello));

    const server = await startServer(join(root, 'data'), [
      '--rate-limits=false',
      '--snapshot-every',
      '0',
      // A run's requests carry the reqTime of its start (see below): the window covers the run.
      '--req-time-window-ms',
      String((SECONDS + 60) * 1000),
    ]);
    try {
      const keys = [
        await createTrader(server, 'buyer', [['usdt', '5000000000']]),
        await createTrader(server, 'seller', [['btc', '1000000']]),
      ];
      // The signature does not cover reqTime, so each side's request is signed once; each run sends
      // the two with its start time as reqTime. autocannon then sends prebuilt requests, as it does
      // to the hello-world server: rebuilding each request (setupRequest) cost it a further 6–7%
      // of the orders' rate on these two cores.
      const paths = keys.map(({ accessKey, secret }, side) =>
        `/api/order?${signedQuery(
          'order',
          [
            ['currency', 'btc_usdt'],
            ['tradeType', side === 0 ? '1' : '0'],
            ['price', '30000.00'],
            ['amount', '0.0100'],
          ],
          accessKey,
          secret,
        )}`.replace(/&reqTime=\d+$/, '&reqTime='),
      );
      const signedRequests = (): autocannon.Request[] =>
        paths.map((path) => ({ method: 'GET', path: `${path}${Date.now()}` }));
      const orders = (): Promise<Figures> => load(`${server.base}/api/order`, { requests: signedRequests() });
      if (RUNS.has('orders')) {
        await load(`${server.base}/api/order`, { duration: 2, requests: signedRequests() });
      }
      const placed = RUNS.has('orders') ? await orders() : undefined;
      console.log(line('signed orders (durable)', placed));
      const depth = RUNS.has('depth')
        ? await load(`${server.base}/data/v1/depth?market=btc_usdt&size=10`)
        : await skipped();
      console.log(line('public depth', depth));
      const ticker = RUNS.has('ticker')
        ? await load(`${server.base}/data/v1/ticker?market=btc_usdt`)
        : await skipped();
      console.log(line('public ticker', ticker));
      const state = await admin(server.base, server.token, '/admin/state', []);
      const ratio = placed !== undefined && hello !== undefined ? placed.rps / hello.rps : NaN;
      console.log(
        `orders/s ÷ hello-world req/s = ${ratio.toFixed(2)} (journal at seq ${String(state.lastSeq)} after the runs)`,
      );
      console.log(
        JSON.stringify({
          bench: 'http',
          connections: CONNECTIONS,
          seconds: SECONDS,
          helloRps: hello?.rps,
          ordersRps: placed?.rps,
          ordersP50Ms: placed?.p50,
          ordersP99Ms: placed?.p99,
          ordersErrors: placed === undefined ? undefined : placed.errors + placed.non2xx,
          depthRps: depth?.rps,
          tickerRps: ticker?.rps,
          ratioOrdersToHello: Number.isNaN(ratio) ? undefined : Number(ratio.toFixed(3)),
        }),
      );
    } finally {
      await server.stop();
      console.log(
        server
          .output()
          .split('\n')
          .filter((l) => l.includes('TMPSTATS'))
          .join('\n'),
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
