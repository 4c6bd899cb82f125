/**
 * @module http.bench — the HTTP API under load from a generator on the same machine (wrk by
 * default, see GENERATOR):
 * 1. baseline: a bare node:http hello-world server;
 * 2. signed order placement (GET /api/order, ZB signature checked, journal with fdatasync group
 *    commit, reply after durability), buys and sells alternating on each connection so the book
 *    stays small and half the orders trade;
 * 3. public depth and ticker.
 * Each server runs in its own process; the generator in its own (wrk) or in this one. Reports
 * requests/s (wrk: its mean over the run; the others: the median of per-second samples), latency
 * percentiles, and Bourse's orders/s ÷ hello-world requests/s. Every order's reply must carry
 * code 1000 (wrk and lean check the bodies), or it counts as an error.
 * Why wrk: on two cores the generator's CPU is taken from the server it measures; autocannon
 * spends ~27 µs a request, a core at 37k/s, wrk a fraction of that (bench/README.md, session 5).
 * The last line is one JSON object. Rate limits are switched off (`--rate-limits=false`): the
 * spec's 60 requests/s per key would otherwise need 500+ keys for this load.
 * `HTTP_BENCH_RUNS=orders` (say) makes only some runs, e.g. to profile the server under one load.
 * `HTTP_BENCH_METRICS_PAIRS=n` instead measures what the Prometheus metrics cost: two servers,
 * one with `--metrics=false` and one with metrics on and `/metrics` scraped every second during
 * its runs, each given n order runs, interleaved A B B A …, so that the shared machine's drift
 * falls on both alike.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { runLoad } from './http-load.ts';
import { signedOrderPaths, type Keys } from './order-paths.ts';
import { startServer } from '../test/fixtures/server-process.ts';
import { admin, createTrader, TEST_USER_AGENT } from '../test/fixtures/zb-client.ts';
import { finish, sized } from './results.ts';

const CONNECTIONS = Number(process.env['HTTP_BENCH_CONNECTIONS'] ?? sized(100, 20));
const SECONDS = Number(process.env['HTTP_BENCH_SECONDS'] ?? sized(10, 2));
/** Which runs to make (comma-separated: hello, orders, depth, ticker); default all. */
const ALL_RUNS = ['hello', 'orders', 'depth', 'ticker'];
const RUNS = new Set((process.env['HTTP_BENCH_RUNS'] ?? ALL_RUNS.join(',')).split(','));
const unknownRuns = [...RUNS].filter((run) => !ALL_RUNS.includes(run));
if (unknownRuns.length > 0) {
  throw new Error(`HTTP_BENCH_RUNS: unknown run ${unknownRuns.join(', ')}; runs are ${ALL_RUNS.join(', ')}`);
}
const skipped = (): Promise<Figures | undefined> => Promise.resolve(undefined);
/** Pairs of order runs without and with metrics (0: the usual runs). */
const METRICS_PAIRS = Number(process.env['HTTP_BENCH_METRICS_PAIRS'] ?? 0);
/** How often the metrics run is scraped (ms). */
const SCRAPE_EVERY_MS = 1_000;
const GENERATORS = ['wrk', 'lean', 'autocannon'];
/**
 * The load generator (HTTP_BENCH_GENERATOR): `wrk` (C, one thread; the default when installed:
 * `npm run bench:setup`), `lean` (bench/http-load.ts, JavaScript) or `autocannon`.
 */
const GENERATOR = process.env['HTTP_BENCH_GENERATOR'] ?? (hasWrk() ? 'wrk' : 'lean');
if (!GENERATORS.includes(GENERATOR)) {
  throw new Error(`HTTP_BENCH_GENERATOR: ${GENERATOR}? generators are ${GENERATORS.join(', ')}`);
}

function hasWrk(): boolean {
  return spawnSync('wrk', ['--version']).error === undefined;
}

interface Figures {
  readonly rps: number;
  readonly rpsMean: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  readonly non2xx: number;
  readonly total: number;
}

/** What a run sends: GET paths, cycled per connection, and (lean only) text every body must hold. */
interface Load {
  readonly paths: readonly string[];
  readonly expectBody?: string;
  readonly seconds?: number;
}

async function load(base: string, run: Load): Promise<Figures> {
  if (GENERATOR === 'wrk') return wrk(base, run);
  const { paths, expectBody, seconds = SECONDS } = run;
  const url = new URL(base);
  if (GENERATOR === 'autocannon') {
    const result = await autocannon({
      url: base,
      connections: CONNECTIONS,
      duration: seconds,
      headers: { 'user-agent': TEST_USER_AGENT },
      requests: paths.map((path) => ({ method: 'GET', path })),
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
  const result = await runLoad({
    host: url.hostname,
    port: Number(url.port),
    connections: CONNECTIONS,
    seconds,
    requests: paths.map((path) =>
      Buffer.from(
        `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nUser-Agent: ${TEST_USER_AGENT}\r\n` +
          'Connection: keep-alive\r\n\r\n',
        'latin1',
      ),
    ),
    ...(expectBody === undefined ? {} : { expectBody }),
  });
  const latencies = result.latenciesUs.slice().sort();
  const at = (p: number): number =>
    Number(
      ((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN) / 1000).toFixed(
        1,
      ),
    );
  return {
    rps: median(result.perSecond),
    rpsMean: Math.round(result.completed / seconds),
    p50: at(0.5),
    p99: at(0.99),
    errors: result.connectionErrors,
    non2xx: result.badResponses,
    total: result.completed,
  };
}

/**
 * One wrk run (one thread, CONNECTIONS connections, the paths cycled): requests/s is wrk's mean
 * over the run (wrk keeps no per-second counts), latencies are its percentiles. A Lua script
 * prebuilds the requests and, with `expectBody`, counts bodies without that text as errors.
 */
async function wrk(base: string, { paths, expectBody, seconds = SECONDS }: Load): Promise<Figures> {
  const lua = (text: string): string => JSON.stringify(text); // a JSON string is a valid Lua string here
  const script = join(root, `wrk-${process.pid}-${Date.now()}.lua`);
  writeFileSync(
    script,
    `local paths = { ${paths.map(lua).join(', ')} }
local requests = {}
local n = 0
local bad = 0
local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function()
  for k, path in ipairs(paths) do
    requests[k] = wrk.format("GET", path, { ["User-Agent"] = ${lua(TEST_USER_AGENT)} })
  end
end
request = function()
  n = n % #requests + 1
  return requests[n]
end
${
  expectBody === undefined
    ? ''
    : `response = function(status, headers, body)
  if not string.find(body, ${lua(expectBody)}, 1, true) then bad = bad + 1 end
end`
}
done = function(summary, latency, requests)
  local badBodies = 0
  for _, t in ipairs(threads) do badBodies = badBodies + (t:get("bad") or 0) end
  local e = summary.errors
  io.write(string.format('WRK {"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"errors":%d,"non2xx":%d,"badBodies":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, e.status, badBodies))
end
`,
  );
  const child = spawn('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '-s', script, base], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  rmSync(script, { force: true });
  const m = /^WRK (\{.*\})$/m.exec(out);
  if (code !== 0 || m === null) throw new Error(`wrk failed (exit ${code}): ${out}`);
  const r = JSON.parse(m[1] as string) as Record<string, number>;
  const num = (k: string): number => r[k] as number;
  const rps = Math.round(num('requests') / (num('durationUs') / 1e6));
  return {
    rps,
    rpsMean: rps,
    p50: Number((num('p50Us') / 1000).toFixed(1)),
    p99: Number((num('p99Us') / 1000).toFixed(1)),
    errors: num('errors'),
    non2xx: num('non2xx') + num('badBodies'),
    total: num('requests'),
  };
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
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
    const base = `http://127.0.0.1:${port}`;
    await load(base, { paths: ['/api/order'], seconds: sized(2, 1) });
    return await load(base, { paths: ['/api/order'] });
  } finally {
    child.kill();
  }
}

type Server = Awaited<ReturnType<typeof startServer>>;

/** The flags of every Bourse server of the bench. */
const SERVER_FLAGS = [
  '--rate-limits=false',
  '--snapshot-every',
  '0',
  // A run's requests carry the reqTime of its start (see orderLoad): the window covers the run.
  '--req-time-window-ms',
  String((SECONDS + 60) * 1000),
];

/**
 * Makes a buyer and a seller on `server` and returns the load of a run of signed orders: buys and
 * sells of 0.01 BTC at one price, alternating on each connection.
 */
async function orderLoad(server: Server): Promise<(seconds?: number) => Load> {
  const keys = [
    await createTrader(server, 'buyer', [['usdt', '5000000000']]),
    await createTrader(server, 'seller', [['btc', '1000000']]),
  ];
  const paths = signedOrderPaths(keys[0] as Keys, keys[1] as Keys);
  return (seconds = SECONDS) => ({
    paths: paths.map((path) => `${path}${Date.now()}`),
    expectBody: '"code":1000',
    seconds,
  });
}

/** Scrapes `/metrics` every SCRAPE_EVERY_MS until stopped; resolves with the scrapes made. */
function scraper(server: Server): { stop(): Promise<number> } {
  let stopped = false;
  let scrapes = 0;
  const done = (async () => {
    while (!stopped) {
      const response = await fetch(`${server.adminBase}/metrics`);
      if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
      await response.text();
      scrapes++;
      await new Promise((resolve) => setTimeout(resolve, SCRAPE_EVERY_MS));
    }
    return scrapes;
  })();
  return {
    stop: () => {
      stopped = true;
      return done;
    },
  };
}

/**
 * The metrics' cost on order throughput: METRICS_PAIRS runs on a server without metrics (A) and
 * as many on one with metrics scraped every second (B), in the order A B B A A B …
 */
async function metricsCost(): Promise<void> {
  const without = await startServer(join(root, 'data-without'), [...SERVER_FLAGS, '--metrics=false']);
  const withMetrics = await startServer(join(root, 'data-with'), SERVER_FLAGS);
  try {
    const loads = { without: await orderLoad(without), with: await orderLoad(withMetrics) };
    await load(without.base, loads.without(2));
    await load(withMetrics.base, loads.with(2));
    const a: number[] = [];
    const b: number[] = [];
    let scrapes = 0;
    for (let i = 0; i < METRICS_PAIRS * 2; i++) {
      // A B B A A B …: each pair's first run alternates, so a trend in the machine's load cancels.
      const metricsRun = i % 4 === 1 || i % 4 === 2;
      if (metricsRun) {
        const s = scraper(withMetrics);
        const f = await load(withMetrics.base, loads.with());
        scrapes += await s.stop();
        if (f.errors + f.non2xx > 0) throw new Error(`metrics run: ${f.errors + f.non2xx} errors`);
        b.push(f.rps);
        console.log(line(`orders, metrics scraped`, f));
      } else {
        const f = await load(without.base, loads.without());
        if (f.errors + f.non2xx > 0) throw new Error(`no-metrics run: ${f.errors + f.non2xx} errors`);
        a.push(f.rps);
        console.log(line(`orders, --metrics=false`, f));
      }
    }
    // Runs i of each side were made next to each other: their ratio is the least drift-prone figure.
    const ratios = a.map((x, i) => (b[i] as number) / x);
    const costPct = (1 - median(ratios)) * 100;
    console.log(
      `metrics cost: ${costPct.toFixed(1)}% (median of the ${ratios.length} paired ratios ` +
        `${ratios.map((r) => r.toFixed(3)).join(', ')}); medians ${median(a)} → ${median(b)} orders/s; ${scrapes} scrapes`,
    );
    console.log(
      JSON.stringify({
        bench: 'http-metrics-cost',
        connections: CONNECTIONS,
        seconds: SECONDS,
        pairs: METRICS_PAIRS,
        withoutRps: a,
        withRps: b,
        costPct: Number(costPct.toFixed(2)),
        scrapes,
      }),
    );
  } finally {
    await without.stop();
    await withMetrics.stop();
  }
}

/** The run's temporary directory: the server's data and wrk's scripts. */
const root = mkdtempSync(join(import.meta.dirname, '..', '.bench-tmp-http-'));

async function main(): Promise<void> {
  console.log(
    `bench:http — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model}, load average ${loadavg()[0]?.toFixed(2)}, ` +
      `${CONNECTIONS} connections, ${SECONDS} s per run, load generator ${GENERATOR}, each server in its own process`,
  );
  try {
    if (METRICS_PAIRS > 0) {
      await metricsCost();
      return;
    }
    const hello = RUNS.has('hello') ? await helloWorld() : undefined;
    console.log(line('hello world (node:http)', hello));

    const server = await startServer(join(root, 'data'), SERVER_FLAGS);
    try {
      const signed = await orderLoad(server);
      const orders = (): Promise<Figures> => load(server.base, signed());
      if (RUNS.has('orders')) await load(server.base, signed(sized(2, 1)));
      const placed = RUNS.has('orders') ? await orders() : undefined;
      console.log(line('signed orders (durable)', placed));
      const depth = RUNS.has('depth')
        ? await load(server.base, { paths: ['/data/v1/depth?market=btc_usdt&size=10'] })
        : await skipped();
      console.log(line('public depth', depth));
      const ticker = RUNS.has('ticker')
        ? await load(server.base, { paths: ['/data/v1/ticker?market=btc_usdt'] })
        : await skipped();
      console.log(line('public ticker', ticker));
      const state = await admin(server.adminBase, server.token, '/admin/state', []);
      const ratio = placed !== undefined && hello !== undefined ? placed.rps / hello.rps : NaN;
      console.log(
        `orders/s ÷ hello-world req/s = ${ratio.toFixed(2)} (journal at seq ${String(state.lastSeq)} after the runs)`,
      );
      finish('http', {
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
      });
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
