/**
 * @module ws-harness — what the WebSocket benchmarks (ws.bench.ts, cluster.bench.ts) share: child
 * processes and their IPC, the client processes (ws-client-worker.ts), per-second sampling,
 * percentiles, and the machine's CPU time from /proc/stat.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signedSubscription, WsTestClient } from '../test/fixtures/ws-client.ts';
import type { ZbClient } from '../test/fixtures/zb-client.ts';

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
export const median = (xs: readonly number[]): number => percentile(xs, 0.5);
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number;
}
export const round = (x: number, digits = 1): number => Number(x.toFixed(digits));

/** Waits for the first IPC message of `type` from `child`. */
export function nextMessage<T>(child: ChildProcess, type: string, timeoutMs = 120_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no '${type}' from child in time`)), timeoutMs);
    const onMessage = (message: { type: string }): void => {
      if (message.type !== type) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message as T);
    };
    child.on('message', onMessage);
  });
}

export function child(
  file: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  execArgv: readonly string[] = [],
): ChildProcess {
  const c = fork(join(import.meta.dirname, file), args, {
    env: { ...process.env, ...env },
    execArgv: [...execArgv],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  c.on('error', () => undefined);
  return c;
}

export interface Clients {
  readonly workers: ChildProcess[];
  frames(): number;
  ready(): number;
  /** CPU time the client processes used since they started (µs). */
  cpuMicros(): number;
}

/** CPU time all processes on the machine used, from /proc/stat (µs, summed over cores). */
export function machineBusyMicros(): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  // user nice system idle iowait irq softirq steal …: busy is all but idle and iowait, in 1/100 s.
  const busy = fields.reduce((sum, v, i) => (i === 3 || i === 4 ? sum : sum + v), 0);
  return busy * 10_000;
}

export interface ClientLoad {
  readonly connections: number;
  /** Client processes the connections are spread over. */
  readonly workers: number;
  readonly channels: readonly string[];
  /** Every how many connections one records trade arrivals (0: none). */
  readonly sampleEvery: number;
}

/** Client processes (ws-client-worker.ts) holding `load.connections` connections to host:port. */
export function startClients(host: string, port: number, load: ClientLoad): Clients {
  const counts: { frames: number; ready: number; cpuMicros: number }[] = [];
  const workers = Array.from({ length: load.workers }, (_, i) => {
    const n = Math.floor(load.connections / load.workers) + (i < load.connections % load.workers ? 1 : 0);
    const w = child('ws-client-worker.ts', [
      host,
      String(port),
      '/websocket',
      String(n),
      String(load.sampleEvery),
      JSON.stringify(load.channels),
    ]);
    counts[i] = { frames: 0, ready: 0, cpuMicros: 0 };
    w.on('message', (m: { type: string; frames: number; ready: number; cpuMicros: number }) => {
      if (m.type === 'count') counts[i] = m;
    });
    return w;
  });
  return {
    workers,
    frames: () => counts.reduce((sum, c) => sum + c.frames, 0),
    ready: () => counts.reduce((sum, c) => sum + c.ready, 0),
    cpuMicros: () => counts.reduce((sum, c) => sum + c.cpuMicros, 0),
  };
}

export async function waitReady(clients: Clients, connections: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (clients.ready() < connections) {
    if (Date.now() > deadline)
      throw new Error(`only ${clients.ready()} of ${connections} connections subscribed`);
    await sleep(250);
  }
}

/** Per-second deltas of `read()` over `seconds`. */
export async function perSecond(seconds: number, read: () => number): Promise<number[]> {
  const out: number[] = [];
  let last = read();
  let at = performance.now();
  for (let i = 0; i < seconds; i++) {
    await sleep(1000 - ((performance.now() - at) % 1000));
    const now = performance.now();
    const value = read();
    out.push(((value - last) * 1000) / (now - at));
    last = value;
    at = now;
  }
  return out;
}

/** A resting book of 50 levels a side around 30000 on btc_usdt, so that depth messages are full size. */
export async function seedBook(maker: ZbClient): Promise<void> {
  for (const [side, first, step] of [
    ['1', 29_950, -1],
    ['0', 30_050, 1],
  ] as const) {
    for (let batch = 0; batch < 50; batch += 20) {
      const pairs = Array.from(
        { length: Math.min(20, 50 - batch) },
        (_, i) => `[${first + step * (batch + i)}.00,0.5000]`,
      );
      const r = await maker.call('orderMoreV2', [
        ['market', 'btc_usdt'],
        ['tradeParams', `[${pairs.join(',')}]`],
        ['tradeType', side],
      ]);
      if (r.code !== 1000) throw new Error(`book setup refused: ${JSON.stringify(r)}`);
    }
  }
}

/**
 * The latency probe: subscribed to the traders' push_user_incr_record, whose records carry each
 * fill's trade id and the time the sequencer stamped on the command that made it. It keeps
 * trade id → time, and the private pushes' latency for trades from `windowStart` on.
 */
export class TradeProbe {
  readonly tradeTime = new Map<number, number>();
  readonly privateLatency: number[] = [];
  windowStart = Infinity;
  readonly #client: WsTestClient;

  private constructor(client: WsTestClient) {
    this.#client = client;
    client.ws.removeAllListeners('message');
    client.ws.on('message', (data: Buffer) => {
      const arrived = performance.timeOrigin + performance.now();
      const m = JSON.parse(data.toString()) as { dataType?: string; record?: number[] };
      if (m.dataType !== 'userIncrRecord' || m.record === undefined) return;
      const tid = m.record[13] as number;
      const time = m.record[16] as number;
      if (tid > 0 && !this.tradeTime.has(tid)) {
        this.tradeTime.set(tid, time);
        if (time >= this.windowStart) this.privateLatency.push(arrived - time);
      }
    });
  }

  /** Connects to `wsUrl` and subscribes to each trader's btc_usdt records. */
  static async open(wsUrl: string, traders: readonly ZbClient[]): Promise<TradeProbe> {
    const probe = new TradeProbe(await WsTestClient.connect(wsUrl));
    for (const trader of traders) {
      probe.#client.send(
        signedSubscription('push_user_incr_record', trader.accessKey, trader.secret, {
          market: 'btcusdtdefault',
        }),
      );
    }
    return probe;
  }

  /** The trades pushes' latency the client processes sampled, for trades made in [from, to]. */
  async publicLatencies(workers: readonly ChildProcess[], from: number, to: number): Promise<number[]> {
    const latencies: number[] = [];
    for (const w of workers) {
      const reply = nextMessage<{ samples: number[] }>(w, 'samples');
      w.send({ type: 'samples' });
      const { samples } = await reply;
      for (let i = 0; i < samples.length; i += 2) {
        const time = this.tradeTime.get(samples[i] as number);
        if (time !== undefined && time >= from && time <= to)
          latencies.push((samples[i + 1] as number) - time);
      }
    }
    return latencies;
  }

  close(): Promise<unknown> {
    return this.#client.close();
  }
}
