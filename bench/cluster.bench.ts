/**
 * @module cluster.bench — `npm run bench:cluster`: the cluster (docs/scale-out.md; every role its
 * own process, test/fixtures/cluster.ts: engine on a JetStream stream of a private nats-server
 * with `sync_interval: always`, two gateways, `bourse history` on PostgreSQL) beside the embedded
 * server (`npm start`: one process, file journal, SQLite), in the same run:
 *
 * 1. Orders: signed orders (bench/order-paths.ts) from the lean generator (bench/http-load.ts) in
 *    this process, `CLUSTER_BENCH_CONNECTIONS` keep-alive connections for `CLUSTER_BENCH_SECONDS`:
 *    to the embedded server, to one gateway, and split over two gateways; `CLUSTER_BENCH_ROUNDS`
 *    rounds, the three modes in a rotating order within each (drift on the shared machine falls
 *    on all alike). Orders/s (median of per-second counts), reply p50/p99, and each process's
 *    CPU time over the run ÷ the orders placed.
 * 2. Pushes: `CLUSTER_BENCH_SUBSCRIBERS` WebSocket connections (ws-client-worker.ts, every
 *    connection on btc_usdt's ticker, depth, quick depth, trades and 1min kline; a 50-level book
 *    each side) while an order process sends `CLUSTER_BENCH_PUSH_ORDERS` orders/s in batches of
 *    20: all on the embedded server, then in the cluster half on each gateway with the orders
 *    through gateway A. Trade-to-push latency as bench:ws measures it (from the time the
 *    sequencer stamped on the command that made the trade to the trades push's arrival), frames
 *    delivered, and each process's CPU ÷ frames.
 * 3. Failover: bench/cluster-failover.bench.ts when it exists (it is the standby's), else a line
 *    saying it runs separately.
 *
 * From the per-order and per-push costs it prints what a 16-core machine and three machines like
 * this one would carry (the arithmetic is in bench/README.md, "Cluster"). Rate limits are off in
 * both modes (`--rate-limits=false`, as in bench:http: 60 requests/s per key would need hundreds
 * of keys); bench:limits has their cost. The last line is one JSON object.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { startCluster, type Cluster } from '../test/fixtures/cluster.ts';
import type { RoleProcess } from '../test/fixtures/role-process.ts';
import { startServer, type ServerProcess } from '../test/fixtures/server-process.ts';
import { createTrader, ZbClient } from '../test/fixtures/zb-client.ts';
import { runLoad, type LoadResult } from './http-load.ts';
import { signedOrderPaths } from './order-paths.ts';
import { CpuMeter, postgresBackends } from './proc-cpu.ts';
import {
  child,
  median,
  nextMessage,
  percentile,
  perSecond,
  round,
  seedBook,
  sleep,
  startClients,
  TradeProbe,
  waitReady,
  type Clients,
} from './ws-harness.ts';
import { finish, QUICK, sized } from './results.ts';

const CONNECTIONS = Number(process.env['CLUSTER_BENCH_CONNECTIONS'] ?? sized(64, 8));
const SECONDS = Number(process.env['CLUSTER_BENCH_SECONDS'] ?? sized(8, 2));
const ROUNDS = Number(process.env['CLUSTER_BENCH_ROUNDS'] ?? sized(3, 1));
const SUBSCRIBERS = Number(process.env['CLUSTER_BENCH_SUBSCRIBERS'] ?? sized(1000, 50));
const PUSH_ORDERS = Number(process.env['CLUSTER_BENCH_PUSH_ORDERS'] ?? sized(2000, 200));
const PUSH_SECONDS = Number(process.env['CLUSTER_BENCH_PUSH_SECONDS'] ?? sized(10, 2));
const PUSH_WARMUP_SECONDS = sized(3, 1);
const PER_BATCH = 20;
const CHANNELS = ['ticker', 'depth', 'quick_depth', 'trades', 'kline_1min'].map((k) => `btcusdt_${k}`);
const FAILOVER_BENCH = join(import.meta.dirname, 'cluster-failover.bench.ts');

const FLAGS = [
  '--rate-limits=false',
  '--snapshot-every',
  '0',
  // A run's requests carry the reqTime of its start: the window covers the whole bench.
  '--req-time-window-ms',
  String(3_600_000),
  '--max-connections-per-ip',
  '100000',
];

type Mode = 'embedded' | 'one gateway' | 'two gateways';
const MODES: readonly Mode[] = ['embedded', 'one gateway', 'two gateways'];

interface OrderRun {
  readonly ordersPerSecond: number;
  readonly orders: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  /** CPU µs per order, by process group. */
  readonly cpuPerOrder: Record<string, number>;
}

/** Pids of each process group of the cluster (PostgreSQL: the backends of its database). */
function clusterGroups(cluster: Cluster): Record<string, () => readonly number[]> {
  const pid = (p: { child: ChildProcess }) => (): number[] =>
    p.child.pid === undefined ? [] : [p.child.pid];
  const [a, b] = cluster.gateways as [RoleProcess, RoleProcess];
  return {
    engine: pid(cluster.engine),
    'gateway A': pid(a),
    'gateway B': pid(b),
    history: pid(cluster.history),
    'nats-server': () => {
      const p = cluster.nats.pid();
      return p === undefined ? [] : [p];
    },
    postgres: () => postgresBackends(cluster.database.name),
  };
}

/** Orders at every target at once, `CONNECTIONS` split over them; figures merged. */
async function orderRun(
  targets: readonly string[],
  paths: readonly string[],
  meter: CpuMeter,
  seconds = SECONDS,
): Promise<OrderRun> {
  const reqTime = Date.now();
  const requests = paths.map((path) => `${path}${reqTime}`);
  meter.start();
  const results: LoadResult[] = await Promise.all(
    targets.map((base) => {
      const url = new URL(base);
      return runLoad({
        host: url.hostname,
        port: Number(url.port),
        connections: Math.round(CONNECTIONS / targets.length),
        seconds,
        requests: requests.map((path) =>
          Buffer.from(
            `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nUser-Agent: bench\r\nConnection: keep-alive\r\n\r\n`,
            'latin1',
          ),
        ),
        expectBody: '"code":1000',
      });
    }),
  );
  const cpu = meter.delta();
  const perSecondSum = (results[0] as LoadResult).perSecond.map((_, i) =>
    results.reduce((sum, r) => sum + (r.perSecond[i] ?? 0), 0),
  );
  const latencies = results.flatMap((r) => [...r.latenciesUs]).sort((x, y) => x - y);
  const orders = results.reduce((sum, r) => sum + r.completed - r.badResponses, 0);
  return {
    ordersPerSecond: median(perSecondSum),
    orders,
    p50Ms: round(percentile(latencies, 0.5) / 1000),
    p99Ms: round(percentile(latencies, 0.99) / 1000),
    errors: results.reduce((sum, r) => sum + r.badResponses + r.connectionErrors, 0),
    cpuPerOrder: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, round(v / Math.max(1, orders))])),
  };
}

interface PushRun {
  readonly framesPerSecond: number;
  readonly ordersPerSecond: number;
  readonly pushP50Ms: number;
  readonly pushP99Ms: number;
  readonly samples: number;
  readonly orderReplyP99Ms: number;
  /** CPU µs per frame delivered, by process group, and the groups' share of a core. */
  readonly cpuPerFrame: Record<string, number>;
  readonly cores: Record<string, number>;
}

/**
 * SUBSCRIBERS connections spread over `wsTargets`, orders at PUSH_ORDERS/s through `orderBase`,
 * the probe on `orderBase`'s private channel.
 */
async function pushRun(
  orderBase: string,
  wsTargets: readonly string[],
  traders: { buyer: ZbClient; seller: ZbClient },
  meter: CpuMeter,
): Promise<PushRun> {
  const processes: ChildProcess[] = [];
  const probe = await TradeProbe.open(`${orderBase.replace('http', 'ws')}/websocket`, [
    traders.buyer,
    traders.seller,
  ]);
  try {
    const clientSets: Clients[] = wsTargets.map((base) => {
      const url = new URL(base);
      return startClients(url.hostname, Number(url.port), {
        connections: Math.round(SUBSCRIBERS / wsTargets.length),
        workers: 1,
        channels: CHANNELS,
        sampleEvery: 20,
      });
    });
    for (const set of clientSets) processes.push(...set.workers);
    for (const set of clientSets) await waitReady(set, Math.round(SUBSCRIBERS / wsTargets.length));
    const frames = (): number => clientSets.reduce((sum, set) => sum + set.frames(), 0);
    const orders = child('ws-orders-worker.ts', [
      orderBase,
      traders.buyer.accessKey,
      traders.buyer.secret,
      traders.seller.accessKey,
      traders.seller.secret,
      String(PUSH_ORDERS / PER_BATCH),
      String(PER_BATCH),
    ]);
    processes.push(orders);
    let placed = { ok: 0 };
    orders.on('message', (m: { type: string; ok: number }) => {
      if (m.type === 'count') placed = m;
    });
    await sleep(PUSH_WARMUP_SECONDS * 1000);
    orders.send({ type: 'measure' });
    probe.windowStart = Date.now();
    const from = probe.windowStart;
    meter.start();
    const framesAtStart = frames();
    const okAtStart = placed.ok;
    const started = performance.now();
    const rates = await perSecond(PUSH_SECONDS, frames);
    const wallMicros = (performance.now() - started) * 1000;
    const cpu = meter.delta();
    const delivered = frames() - framesAtStart;
    const to = Date.now();
    const repliesReply = nextMessage<{ p50: number; p99: number }>(orders, 'replies');
    orders.send({ type: 'replies' });
    const replies = await repliesReply;
    orders.send({ type: 'stop' });
    const latencies = await probe.publicLatencies(
      clientSets.flatMap((set) => set.workers),
      from,
      to,
    );
    return {
      framesPerSecond: Math.round(median(rates)),
      ordersPerSecond: Math.round(((placed.ok - okAtStart) * PER_BATCH * 1e6) / wallMicros),
      pushP50Ms: round(percentile(latencies, 0.5)),
      pushP99Ms: round(percentile(latencies, 0.99)),
      samples: latencies.length,
      orderReplyP99Ms: round(replies.p99),
      cpuPerFrame: Object.fromEntries(
        Object.entries(cpu).map(([k, v]) => [k, round(v / Math.max(1, delivered), 2)]),
      ),
      cores: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, round(v / wallMicros, 2)])),
    };
  } finally {
    for (const p of processes) p.kill();
    await probe.close();
  }
}

/** Two traders with room for every order of the bench, on the venue at `venue` and usable at `base`. */
async function traders(
  venue: { base: string; adminBase: string; token: string },
  tag: string,
  base: string,
): Promise<{ buyer: ZbClient; seller: ZbClient; maker: ZbClient }> {
  const make = async (name: string, deposits: [string, string][]): Promise<ZbClient> => {
    const t = await createTrader(venue, `${tag}-${name}`, deposits);
    return new ZbClient(base, t.accessKey, t.secret);
  };
  return {
    buyer: await make('buyer', [['usdt', '5000000000']]),
    seller: await make('seller', [['btc', '10000000']]),
    maker: await make('maker', [
      ['usdt', '100000000'],
      ['btc', '10000'],
    ]),
  };
}

const fmt = (costs: Record<string, number>, unit: string): string =>
  Object.entries(costs)
    .map(([k, v]) => `${k} ${v} ${unit}`)
    .join(', ');

/** Median of each key over runs. */
function medianCosts(runs: readonly Record<string, number>[]): Record<string, number> {
  const keys = Object.keys(runs[0] ?? {});
  return Object.fromEntries(keys.map((k) => [k, round(median(runs.map((r) => r[k] ?? 0)), 2)]));
}

/**
 * What the per-order costs (µs of CPU per order, by process, from the two-gateway runs) and the
 * per-frame costs allow, assuming CPU is what runs out: the engine's process is one thread's
 * work (its ceiling is one core, whatever the machine), a gateway's too (so a machine runs
 * several), and every gateway applies every order to its replica.
 */
function capacity(
  perOrder: Record<string, number>,
  replicaPerOrder: number,
  perFrame: number,
): Record<string, number> {
  const engine = perOrder['engine'] ?? NaN;
  const history = perOrder['history'] ?? NaN;
  const nats = perOrder['nats-server'] ?? NaN;
  const pg = perOrder['postgres'] ?? NaN;
  // A gateway that takes an order: its share of the two gateways' CPU per order, less the replica
  // cost it also pays for the other gateway's orders.
  const gatewayOrder = (perOrder['gateway A'] ?? 0) + (perOrder['gateway B'] ?? 0) - replicaPerOrder;
  const engineCeiling = 1e6 / engine;
  /** Orders/s with `gateways` gateways on `cores` cores (besides the others), and each process ≤ 1 core. */
  const orders = (cores: number, gateways: number): number => {
    const perOrderAll = engine + history + nats + pg + gatewayOrder + (gateways - 1) * replicaPerOrder;
    const perGateway = gatewayOrder / gateways + replicaPerOrder * (1 - 1 / gateways);
    return Math.min(engineCeiling, 1e6 / history, 1e6 / perGateway, (cores * 1e6) / perOrderAll);
  };
  let best16 = 0;
  let gateways16 = 1;
  for (let g = 1; g <= 14; g++) {
    const o = orders(16, g);
    if (o > best16) [best16, gateways16] = [o, g];
  }
  // Three machines of 2 cores: engine + nats-server on one, PostgreSQL + history on another,
  // the gateways (two per machine, each ≤ 1 core) on the third and beside the others' spare.
  const threeMachines = Math.min(engineCeiling, 2e6 / (engine + nats), 2e6 / (history + pg), orders(6, 4));
  return {
    engineCeilingOrdersPerSecond: Math.round(engineCeiling),
    gatewayOrderMicros: round(gatewayOrder),
    replicaOrderMicros: round(replicaPerOrder),
    sixteenCoresOrdersPerSecond: Math.round(best16),
    sixteenCoresGateways: gateways16,
    threeMachinesOrdersPerSecond: Math.round(threeMachines),
    framesPerGatewayCorePerSecond: Math.round(1e6 / perFrame),
  };
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(import.meta.dirname, '..', '.bench-tmp-cluster-'));
  const load = (): string =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  console.log(
    `bench:cluster — node ${process.version}, ${cpus().length} × ${cpus()[0]?.model}, load average ${load()}; ` +
      `orders: ${CONNECTIONS} connections, ${SECONDS} s × ${ROUNDS} rounds per mode; pushes: ${SUBSCRIBERS} subscribers × ${CHANNELS.length} channels, ` +
      `${PUSH_ORDERS} orders/s, ${PUSH_SECONDS} s`,
  );
  let embedded: ServerProcess | undefined;
  let cluster: Cluster | undefined;
  try {
    embedded = await startServer(join(root, 'embedded'), FLAGS);
    cluster = await startCluster({ gateways: 2, flags: FLAGS });
    const [a, b] = cluster.gateways.map((g) => g.ready) as [string, string];
    const embeddedPid = embedded.child.pid as number;
    const embeddedMeter = new CpuMeter({ embedded: () => [embeddedPid] });
    const clusterMeter = new CpuMeter(clusterGroups(cluster));
    const onEmbedded = await traders(embedded, 'e', embedded.base);
    const onCluster = await traders(cluster.engine, 'c', a);
    await cluster.settled(a);
    await cluster.settled(b);
    const embeddedPaths = signedOrderPaths(onEmbedded.buyer, onEmbedded.seller);
    const clusterPaths = signedOrderPaths(onCluster.buyer, onCluster.seller);
    const run = (mode: Mode, seconds = SECONDS): Promise<OrderRun> =>
      mode === 'embedded'
        ? orderRun([embedded?.base as string], embeddedPaths, embeddedMeter, seconds)
        : orderRun(mode === 'one gateway' ? [a] : [a, b], clusterPaths, clusterMeter, seconds);
    // Warm-up: every mode once, 2 s.
    for (const mode of MODES) await run(mode, 2);

    const runs: Record<Mode, OrderRun[]> = { embedded: [], 'one gateway': [], 'two gateways': [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < MODES.length; i++) {
        const mode = MODES[(i + r) % MODES.length] as Mode;
        const f = await run(mode);
        runs[mode].push(f);
        console.log(
          `round ${r + 1} ${mode.padEnd(12)} ${String(f.ordersPerSecond).padStart(6)} orders/s, p50 ${f.p50Ms} ms, p99 ${f.p99Ms} ms, errors ${f.errors}; ` +
            `CPU per order: ${fmt(f.cpuPerOrder, 'µs')} (load ${load()})`,
        );
      }
    }
    const summary = Object.fromEntries(
      MODES.map((mode) => {
        const list = runs[mode];
        return [
          mode,
          {
            ordersPerSecond: median(list.map((f) => f.ordersPerSecond)),
            p50Ms: median(list.map((f) => f.p50Ms)),
            p99Ms: median(list.map((f) => f.p99Ms)),
            errors: list.reduce((sum, f) => sum + f.errors, 0),
            cpuPerOrder: medianCosts(list.map((f) => f.cpuPerOrder)),
          },
        ];
      }),
    ) as Record<Mode, Omit<OrderRun, 'orders'>>;
    for (const mode of MODES) {
      const s = summary[mode];
      console.log(
        `${mode.padEnd(12)} median ${s.ordersPerSecond} orders/s (${round(s.ordersPerSecond / summary.embedded.ordersPerSecond, 2)} × embedded), ` +
          `p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms; CPU per order: ${fmt(s.cpuPerOrder, 'µs')}`,
      );
    }

    // Pushes: the embedded server, then the cluster's two gateways (orders through A).
    await seedBook(onEmbedded.maker);
    await seedBook(onCluster.maker);
    await cluster.settled(b);
    const pushEmbedded = await pushRun(embedded.base, [embedded.base], onEmbedded, embeddedMeter);
    const pushCluster = await pushRun(a, [a, b], onCluster, clusterMeter);
    for (const [name, p] of [
      ['embedded', pushEmbedded],
      ['two gateways', pushCluster],
    ] as const) {
      console.log(
        `pushes, ${name}: ${p.framesPerSecond} frames/s to ${SUBSCRIBERS} connections at ${p.ordersPerSecond} orders/s; ` +
          `trade-to-push p50 ${p.pushP50Ms} ms, p99 ${p.pushP99Ms} ms (${p.samples} samples); order reply p99 ${p.orderReplyP99Ms} ms; ` +
          `CPU per frame: ${fmt(p.cpuPerFrame, 'µs')}; cores: ${fmt(p.cores, '')}`,
      );
    }

    // Gateway B takes no order in the one-gateway runs: its CPU then is the replica's cost per order.
    const replica = summary['one gateway'].cpuPerOrder['gateway B'] ?? NaN;
    // Gateway B's CPU in the push run (no orders through it) less its replica's share, per frame it sent.
    const bFrames = pushCluster.framesPerSecond / 2;
    const bPerFrame =
      ((pushCluster.cores['gateway B'] ?? 0) * 1e6 - replica * pushCluster.ordersPerSecond) /
      Math.max(1, bFrames);
    const cap = capacity(summary['two gateways'].cpuPerOrder, replica, bPerFrame);
    console.log(
      `costs: a gateway ${cap.gatewayOrderMicros} µs per order it takes, ${cap.replicaOrderMicros} µs per order it only replicates; ` +
        `${round(bPerFrame, 2)} µs per frame pushed (gateway B)`,
    );
    console.log(
      `capacity from these costs: engine ceiling ${cap.engineCeilingOrdersPerSecond} orders/s (one thread); ` +
        `16 cores: ${cap.sixteenCoresOrdersPerSecond} orders/s with ${cap.sixteenCoresGateways} gateways; ` +
        `three 2-core machines: ${cap.threeMachinesOrdersPerSecond} orders/s; ` +
        `${cap.framesPerGatewayCorePerSecond} frames/s per gateway core`,
    );

    let failover = QUICK
      ? 'failover: not in quick mode (bench:quick runs bench/cluster-failover.bench.ts --quick on its own)'
      : 'failover: bench/cluster-failover.bench.ts is not here yet; it runs separately';
    if (existsSync(FAILOVER_BENCH) && !QUICK) {
      const r = spawnSync(process.execPath, [FAILOVER_BENCH], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      failover = `failover (bench/cluster-failover.bench.ts, exit ${r.status}):\n${r.stdout.trim()}`;
    }
    console.log(failover);
    finish('cluster', {
      bench: 'cluster',
      connections: CONNECTIONS,
      seconds: SECONDS,
      rounds: ROUNDS,
      orders: summary,
      pushes: { embedded: pushEmbedded, twoGateways: pushCluster, subscribers: SUBSCRIBERS },
      replicaMicrosPerOrder: replica,
      gatewayBMicrosPerFrame: round(bPerFrame, 2),
      capacity: cap,
      loadAverage: loadavg().map((l) => round(l, 2)),
    });
  } finally {
    await embedded?.stop();
    await cluster?.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
