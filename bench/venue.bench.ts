/**
 * @module venue.bench — `npm run bench:venue`: the venue as its users load it, every party in
 * its own process:
 * - the server as `npm start` runs it (src/main.ts in a child process: metrics on, logs at info
 *   as JSON lines, history written to SQLite, demo off), on a fresh data directory of its own,
 *   with the rate limits on but set so that this load is not refused (each trader comes from its
 *   own loopback address and key; 65,535 requests a minute per address, 100,000 a second per key)
 *   and the per-address connection cap raised above the subscribers' count (they all come from
 *   127.0.0.1);
 * - trader processes (venue-trader-worker.ts): signed traders on btc_usdt, eth_usdt and zb_usdt,
 *   spot, isolated and cross margin, some with auto-borrow (venue-load.ts), placing limit,
 *   PostOnly and IOC orders and batches of 20 and cancelling, at a set rate of orders a second;
 *   every trader holds a WebSocket subscribed to its private channels;
 * - subscriber processes (ws-client-worker.ts), one per market: VENUE_BENCH_SUBSCRIBERS
 *   connections in all (half on btc_usdt, 30% on eth_usdt, 20% on zb_usdt), each on its
 *   market's ticker, depth, quick depth, trades and 1min kline;
 * - a poller process (venue-poller-worker.ts): the ticker, depth and kline of every market;
 * - this process: setup, the rate steps, the figures.
 *
 * First the same subscriber processes run against a bare `ws` server sending messages of the
 * same sizes (ws-baseline-child.ts), for the delivered-messages ratio. Then, for each rate step
 * (VENUE_BENCH_RATES, default 1,000, 5,000 and 10,000 orders/s, then +5,000 a step until the
 * venue saturates: it acknowledges less than 90% of the rate offered, or the acknowledgement p99
 * passes a second): a warm-up, then STEP_SECONDS measured. Per step: order and cancel
 * acknowledgement p50/p99/p99.9 (each request's reply, a batch one), trade → public push (trades
 * channel, every 10th trade on every 20th connection) and trade → private push (the order
 * records' fills) p50/p99, both from the trade time the sequencer stamped; messages delivered a
 * second (median) beside the bare server's; the server's event-loop delay (its own metrics,
 * nodejs_eventloop_lag_*, less the 10 ms sampling interval); its CPU ÷ orders and ÷ messages
 * delivered (each the whole CPU, divided); refusals by code. RSS at the end. The targets of
 * issue 30 are checked in the figures (not asserted). The last line is one JSON object.
 *
 * `--quick`: one step of 300 orders/s with 60 subscribers for 3 s (CI's smoke run), which fails
 * when an order was refused, nothing traded, no push arrived or no auto-borrow seller borrowed.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, uptime } from 'node:os';
import { join } from 'node:path';
import { startServer, type ServerProcess } from '../test/fixtures/server-process.ts';
import { cpuMicros } from './proc-cpu.ts';
import { finish, QUICK, sized } from './results.ts';
import {
  autoBorrowLoans,
  createStreams,
  MARKETS,
  planStreams,
  seedBooks,
  splitStreams,
  type StreamSpec,
} from './venue-load.ts';
import {
  child,
  machineBusyMicros,
  median,
  nextMessage,
  percentile,
  perSecond,
  round,
  sleep,
  startClients,
  waitReady,
  type Clients,
} from './ws-harness.ts';

const SUBSCRIBERS = Number(process.env['VENUE_BENCH_SUBSCRIBERS'] ?? sized(1000, 60));
const RATES = (process.env['VENUE_BENCH_RATES'] ?? sized('1000,5000,10000', '300')).split(',').map(Number);
/** Step up after RATES until saturation (VENUE_BENCH_SATURATE=0: RATES only). */
const SATURATE = process.env['VENUE_BENCH_SATURATE'] !== '0' && !QUICK;
const SATURATION_STEP = 5_000;
const MAX_RATE = 60_000;
const STEP_SECONDS = Number(process.env['VENUE_BENCH_SECONDS'] ?? sized(15, 3));
const WARMUP_SECONDS = sized(3, 1);
const BASELINE_SECONDS = sized(5, 2);
const TRADER_WORKERS = 2;
const SAMPLE_EVERY_CONNECTION = 20;
/** Each subscriber's channels, on its market. */
const KINDS = ['ticker', 'depth', 'quick_depth', 'trades', 'kline_1min'];
/** How the subscribers are spread over the markets. */
const SHARES = [0.5, 0.3, 0.2];
/** The event-loop histogram's sampling interval (prom-client's default), included in its figures. */
const LAG_RESOLUTION_MS = 10;

const subscriberGroups = MARKETS.map((m, i) => ({
  connections:
    i === MARKETS.length - 1
      ? SUBSCRIBERS - SHARES.slice(0, -1).reduce((sum, s) => sum + Math.round(s * SUBSCRIBERS), 0)
      : Math.round((SHARES[i] ?? 0) * SUBSCRIBERS),
  channels: KINDS.map((k) => `${m.market.replace('_', '')}_${k}`),
}));

function startSubscribers(host: string, port: number, sample: boolean): Clients[] {
  return subscriberGroups.map((g) =>
    startClients(host, port, {
      connections: g.connections,
      workers: 1,
      channels: g.channels,
      sampleEvery: sample ? SAMPLE_EVERY_CONNECTION : 0,
    }),
  );
}
const frames = (groups: readonly Clients[]): number => groups.reduce((sum, g) => sum + g.frames(), 0);

/** Messages a second the bare `ws` server delivers to the same subscriber processes. */
async function baselineRun(): Promise<number> {
  const server = child('ws-baseline-child.ts', []);
  const processes: ChildProcess[] = [server];
  try {
    const { base } = await nextMessage<{ base: string }>(server, 'ready');
    const url = new URL(base);
    const groups = startSubscribers(url.hostname, Number(url.port), false);
    for (const g of groups) processes.push(...g.workers);
    const deadline = Date.now() + 120_000;
    while (frames(groups) < SUBSCRIBERS * KINDS.length) {
      if (Date.now() > deadline) throw new Error('the bare server did not reach every subscriber');
      await sleep(250);
    }
    await sleep(1000);
    return Math.round(median(await perSecond(BASELINE_SECONDS, () => frames(groups))));
  } finally {
    for (const p of processes) p.kill();
  }
}

/** The server's event-loop delay since the previous scrape (prom-client resets it at each). */
async function scrapeLag(adminBase: string): Promise<{ p50: number; p99: number; max: number }> {
  const text = await (await fetch(`${adminBase}/metrics`)).text();
  const value = (name: string): number => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text);
    return m === null ? NaN : round(Math.max(0, Number(m[1]) * 1000 - LAG_RESOLUTION_MS), 2);
  };
  return {
    p50: value('nodejs_eventloop_lag_p50_seconds'),
    p99: value('nodejs_eventloop_lag_p99_seconds'),
    max: value('nodejs_eventloop_lag_max_seconds'),
  };
}

function rssMiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? NaN : Math.round(Number(m[1]) / 1024);
}

interface TraderReport {
  readonly counts: {
    ordersAcked: number;
    ordersRefused: number;
    cancelsAcked: number;
    cancelsRefused: number;
    refusals: Record<string, number>;
    privateMessages: number;
    cyclesSkipped: number;
  };
  readonly orderAckMs: number[];
  readonly cancelAckMs: number[];
  readonly privateMs: number[];
  readonly tradeTimes: number[];
  readonly inFlight: number;
}

interface Traders {
  readonly workers: ChildProcess[];
  ordersAcked(): number;
  inFlight(): number;
  ready(): number;
  cpuMicros(): number;
}

function startTraders(base: string, groups: readonly (readonly StreamSpec[])[]): Traders {
  const state = groups.map(() => ({ ordersAcked: 0, inFlight: 0, ready: 0, cpuMicros: 0 }));
  const workers = groups.map((streams, i) => {
    const w = child('venue-trader-worker.ts', [JSON.stringify({ base, streams })]);
    w.on(
      'message',
      (m: { type: string; ordersAcked: number; inFlight: number; ready: number; cpuMicros: number }) => {
        if (m.type === 'count') state[i] = m;
      },
    );
    return w;
  });
  const sum = (key: 'ordersAcked' | 'inFlight' | 'ready' | 'cpuMicros'): number =>
    state.reduce((total, s) => total + s[key], 0);
  return {
    workers,
    ordersAcked: () => sum('ordersAcked'),
    inFlight: () => sum('inFlight'),
    ready: () => sum('ready'),
    cpuMicros: () => sum('cpuMicros'),
  };
}

async function ask<T>(workers: readonly ChildProcess[], message: object, reply: string): Promise<T[]> {
  return Promise.all(
    workers.map((w) => {
      const answer = nextMessage<T>(w, reply);
      w.send(message);
      return answer;
    }),
  );
}

const pct = (xs: readonly number[], p: number): number => round(percentile(xs, p), 1);

async function main(): Promise<void> {
  const started = Date.now();
  console.log(
    `bench:venue${QUICK ? ' (QUICK: smoke run, do not quote)' : ''} — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model}, ` +
      `load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}; ${SUBSCRIBERS} subscribers on ${MARKETS.map((m) => m.market).join(', ')}; ` +
      `rates ${RATES.join(', ')} orders/s${SATURATE ? ', then to saturation' : ''}; ${WARMUP_SECONDS} s warm-up, ${STEP_SECONDS} s measured a step`,
  );
  const bareMessagesPerSecond = await baselineRun();
  console.log(`bare ws server (same subscribers, same sizes): ${bareMessagesPerSecond} messages/s`);

  const root = mkdtempSync(join(import.meta.dirname, '..', '.bench-tmp-venue-'));
  const processes: ChildProcess[] = [];
  let server: ServerProcess | undefined;
  try {
    server = await startServer(
      join(root, 'data'),
      [
        '--log-level=info',
        '--log-format=json',
        '--metrics=true',
        '--write-history=true',
        '--ip-requests-per-minute=65535',
        '--key-requests-per-second=100000',
        `--max-connections-per-ip=${SUBSCRIBERS + 256}`,
        '--max-connections=20000',
      ],
      {},
      [],
      // VENUE_BENCH_SERVER: another checkout's src/main.ts, for a before/after run of the same load.
      process.env['VENUE_BENCH_SERVER'],
    );
    const pid = server.child.pid as number;
    const url = new URL(server.base);
    await seedBooks(server);
    const streams = await createStreams(server, planStreams(QUICK));
    const traders = startTraders(server.base, splitStreams(streams, TRADER_WORKERS));
    processes.push(...traders.workers);
    const pollers = child('venue-poller-worker.ts', [
      server.base,
      JSON.stringify(MARKETS.map((m) => m.market)),
      JSON.stringify(MARKETS.map((_, i) => `127.0.3.${i + 2}`)),
    ]);
    processes.push(pollers);
    const groups = startSubscribers(url.hostname, Number(url.port), true);
    for (const g of groups) processes.push(...g.workers);
    for (const [i, g] of groups.entries()) await waitReady(g, subscriberGroups[i]?.connections ?? 0);
    const tradersCount = new Set(streams.flatMap((s) => [s.seller.accessKey, s.buyer.accessKey])).size;
    const deadline = Date.now() + 60_000;
    while (traders.ready() < tradersCount) {
      if (Date.now() > deadline)
        throw new Error(`only ${traders.ready()} of ${tradersCount} private sockets open`);
      await sleep(100);
    }
    console.log(
      `${SUBSCRIBERS} subscribers ready; ${streams.length} streams (` +
        `${streams.filter((s) => s.seller.acctType === 0).length} spot, ${streams.filter((s) => s.seller.acctType === 1).length} isolated, ` +
        `${streams.filter((s) => s.seller.acctType === 2).length} cross, ${streams.filter((s) => s.seller.express).length} of them auto-borrow; ` +
        `${tradersCount} traders) in ${traders.workers.length} processes`,
    );

    const tradeTime = new Map<number, number>();
    const steps: Record<string, unknown>[] = [];
    const rates = [...RATES];
    for (let i = 0; i < rates.length; i++) {
      const offered = rates[i] as number;
      for (const w of traders.workers)
        w.send({ type: 'rate', ordersPerSecond: offered / traders.workers.length });
      await sleep(WARMUP_SECONDS * 1000);
      await scrapeLag(server.adminBase);
      for (const w of traders.workers) w.send({ type: 'measure' });
      await ask(
        groups.flatMap((g) => g.workers),
        { type: 'samples', clear: true },
        'samples',
      );
      await ask([pollers], { type: 'report' }, 'report');
      const windowStart = Date.now();
      const cpuStart = {
        server: cpuMicros(pid),
        machine: machineBusyMicros(),
        traders: traders.cpuMicros(),
        subscribers: groups.reduce((sum, g) => sum + g.cpuMicros(), 0),
        at: performance.now(),
      };
      const orderRates: number[] = [];
      let lastAcked = traders.ordersAcked();
      const messageRates = await perSecond(STEP_SECONDS, () => {
        const acked = traders.ordersAcked();
        orderRates.push(acked - lastAcked);
        lastAcked = acked;
        return frames(groups);
      });
      const windowEnd = Date.now();
      const wallMicros = (performance.now() - cpuStart.at) * 1000;
      const serverMicros = cpuMicros(pid) - cpuStart.server;
      const cores = {
        machine: round((machineBusyMicros() - cpuStart.machine) / wallMicros, 2),
        server: round(serverMicros / wallMicros, 2),
        traders: round((traders.cpuMicros() - cpuStart.traders) / wallMicros, 2),
        subscribers: round(
          (groups.reduce((sum, g) => sum + g.cpuMicros(), 0) - cpuStart.subscribers) / wallMicros,
          2,
        ),
      };
      const lag = await scrapeLag(server.adminBase);
      const reports = await ask<TraderReport>(traders.workers, { type: 'report' }, 'report');
      for (const w of traders.workers) w.send({ type: 'rate', ordersPerSecond: 0 });
      const [poll] = await ask<{ ok: number; failed: number; replyMs: number[] }>(
        [pollers],
        { type: 'report' },
        'report',
      );
      for (const r of reports)
        for (let j = 0; j < r.tradeTimes.length; j += 2)
          tradeTime.set(r.tradeTimes[j] as number, r.tradeTimes[j + 1] as number);
      const publicMs: number[] = [];
      for (const { samples } of await ask<{ samples: number[] }>(
        groups.flatMap((g) => g.workers),
        { type: 'samples', clear: true },
        'samples',
      )) {
        for (let j = 0; j < samples.length; j += 2) {
          const time = tradeTime.get(samples[j] as number);
          if (time !== undefined && time >= windowStart && time <= windowEnd)
            publicMs.push((samples[j + 1] as number) - time);
        }
      }
      const merged = <K extends 'orderAckMs' | 'cancelAckMs' | 'privateMs'>(key: K): number[] =>
        reports.flatMap((r) => r[key]);
      const total = (key: keyof TraderReport['counts']): number =>
        reports.reduce((sum, r) => sum + (r.counts[key] as number), 0);
      const refusals: Record<string, number> = {};
      for (const r of reports)
        for (const [code, n] of Object.entries(r.counts.refusals)) refusals[code] = (refusals[code] ?? 0) + n;
      const orderAck = merged('orderAckMs');
      const cancelAck = merged('cancelAckMs');
      const privateMs = merged('privateMs');
      const seconds = (windowEnd - windowStart) / 1000;
      const ordersAcked = total('ordersAcked');
      const publicMessages = messageRates.reduce((sum, r) => sum + r, 0);
      const privateMessages = total('privateMessages');
      const step = {
        offeredOrdersPerSecond: offered,
        ordersPerSecond: Math.round(ordersAcked / seconds),
        ordersPerSecondMedian: Math.round(median(orderRates.slice(1))),
        cancelsPerSecond: Math.round(total('cancelsAcked') / seconds),
        refused: total('ordersRefused') + total('cancelsRefused'),
        refusals,
        cyclesSkipped: total('cyclesSkipped'),
        orderAckSamples: orderAck.length,
        orderAckP50Ms: pct(orderAck, 0.5),
        orderAckP99Ms: pct(orderAck, 0.99),
        orderAckP999Ms: pct(orderAck, 0.999),
        cancelAckSamples: cancelAck.length,
        cancelAckP50Ms: pct(cancelAck, 0.5),
        cancelAckP99Ms: pct(cancelAck, 0.99),
        cancelAckP999Ms: pct(cancelAck, 0.999),
        publicPushSamples: publicMs.length,
        publicPushP50Ms: pct(publicMs, 0.5),
        publicPushP99Ms: pct(publicMs, 0.99),
        privatePushSamples: privateMs.length,
        privatePushP50Ms: pct(privateMs, 0.5),
        privatePushP99Ms: pct(privateMs, 0.99),
        messagesPerSecond: Math.round(median(messageRates)),
        messagesVsBare: round(median(messageRates) / bareMessagesPerSecond, 3),
        privateMessagesPerSecond: Math.round(privateMessages / seconds),
        lagP50Ms: lag.p50,
        lagP99Ms: lag.p99,
        lagMaxMs: lag.max,
        serverCpuPerOrderUs: round(serverMicros / Math.max(1, ordersAcked), 1),
        serverCpuPerMessageUs: round(serverMicros / Math.max(1, publicMessages + privateMessages), 2),
        coresServer: cores.server,
        coresTraders: cores.traders,
        coresSubscribers: cores.subscribers,
        coresMachine: cores.machine,
        pollerReplies: poll?.ok ?? 0,
        pollerFailures: poll?.failed ?? 0,
        pollerReplyP99Ms: pct(poll?.replyMs ?? [], 0.99),
        loadAverage: round(loadavg()[0] ?? 0, 2),
      };
      steps.push(step);
      console.log(
        [
          `${offered} orders/s offered: ${step.ordersPerSecond} acknowledged/s, ${step.cancelsPerSecond} cancels/s, ${step.refused} refused ${JSON.stringify(refusals)}` +
            `${step.cyclesSkipped > 0 ? `, ${step.cyclesSkipped} cycles not started (generator at its cap)` : ''}`,
          `  order ack p50 ${step.orderAckP50Ms} / p99 ${step.orderAckP99Ms} / p99.9 ${step.orderAckP999Ms} ms; ` +
            `cancel ack p50 ${step.cancelAckP50Ms} / p99 ${step.cancelAckP99Ms} / p99.9 ${step.cancelAckP999Ms} ms`,
          `  trade → public push p50 ${step.publicPushP50Ms} / p99 ${step.publicPushP99Ms} ms (${publicMs.length} samples); ` +
            `→ private push p50 ${step.privatePushP50Ms} / p99 ${step.privatePushP99Ms} ms (${privateMs.length})`,
          `  delivered ${step.messagesPerSecond} messages/s (${step.messagesVsBare} × bare), ${step.privateMessagesPerSecond} private/s; ` +
            `event-loop delay p50 ${lag.p50} / p99 ${lag.p99} / max ${lag.max} ms`,
          `  server CPU ${step.serverCpuPerOrderUs} µs/order, ${step.serverCpuPerMessageUs} µs/message; cores: server ${cores.server}, ` +
            `traders ${cores.traders}, subscribers ${cores.subscribers}, machine ${cores.machine} of ${cpus().length}; ` +
            `pollers ${step.pollerReplies} replies, ${step.pollerFailures} failed, p99 ${step.pollerReplyP99Ms} ms; load average ${step.loadAverage}`,
        ].join('\n'),
      );
      // Let the queue drain before the next step.
      const drain = Date.now() + 60_000;
      while (traders.inFlight() > 0 && Date.now() < drain) await sleep(100);
      await sleep(1000);
      const saturated = step.ordersPerSecond < 0.9 * offered || step.orderAckP99Ms > 1000;
      if (SATURATE && i === rates.length - 1 && !saturated && offered + SATURATION_STEP <= MAX_RATE) {
        rates.push(offered + SATURATION_STEP);
      }
    }
    const at = (rate: number): Record<string, number> | undefined =>
      steps.find((s) => s['offeredOrdersPerSecond'] === rate) as Record<string, number> | undefined;
    const s5 = at(5000);
    const s10 = at(10_000);
    const saturation = Math.max(...steps.map((s) => s['ordersPerSecond'] as number));
    const targets =
      s5 === undefined || s10 === undefined
        ? undefined
        : {
            at5000AckP99Le20Ms: (s5['orderAckP99Ms'] ?? NaN) <= 20,
            at5000PushP99LeAckP99Plus10Ms:
              Math.max(s5['publicPushP99Ms'] ?? NaN, s5['privatePushP99Ms'] ?? NaN) <=
              (s5['orderAckP99Ms'] ?? NaN) + 10,
            at10000NothingRefused: s10['refused'] === 0 && s10['cyclesSkipped'] === 0,
            at10000AckP99Le100Ms: (s10['orderAckP99Ms'] ?? NaN) <= 100,
            at10000MessagesGe09Bare: (s10['messagesVsBare'] ?? NaN) >= 0.9,
          };
    const figures = {
      bench: 'venue',
      quick: QUICK,
      subscribers: SUBSCRIBERS,
      streams: streams.length,
      traders: tradersCount,
      stepSeconds: STEP_SECONDS,
      bareMessagesPerSecond,
      steps,
      saturationOrdersPerSecond: saturation,
      autoBorrowLoans: await autoBorrowLoans(server.base, streams),
      serverRssMiBEnd: rssMiB(pid),
      targets,
      loadAverage: loadavg().map((x) => round(x, 2)),
      uptimeSeconds: Math.round(uptime()),
      minutes: round((Date.now() - started) / 60_000, 1),
    };
    console.log(
      `saturation: ${saturation} orders/s acknowledged; server RSS at the end ${figures.serverRssMiBEnd} MiB; ` +
        `${figures.autoBorrowLoans} loans taken by the auto-borrow sellers' orders` +
        (targets === undefined ? '' : `; targets ${JSON.stringify(targets)}`),
    );
    // The smoke run checks that the load is what it says (nothing about time): every order
    // accepted, trades made and pushed to both kinds of channel, the auto-borrow sellers borrowing.
    const broken = QUICK
      ? steps.flatMap((st) =>
          [
            st['refused'] !== 0 ? `${String(st['refused'])} refused ${JSON.stringify(st['refusals'])}` : '',
            st['ordersPerSecond'] === 0 ? 'no order acknowledged' : '',
            st['publicPushSamples'] === 0 ? 'no trade seen on a public trades channel' : '',
            st['privatePushSamples'] === 0 ? 'no fill seen on a private channel' : '',
          ].filter((problem) => problem !== ''),
        )
      : [];
    if (QUICK && figures.autoBorrowLoans === 0) broken.push('no loan taken by an auto-borrow seller');
    if (broken.length > 0)
      throw new Error(`bench:venue: the load is not what it should be: ${broken.join('; ')}`);
    finish('venue', figures);
  } finally {
    for (const p of processes) p.kill();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
