/**
 * @module rate-limit.bench — what the rate limits cost per signed request (one hitIp and one
 * hitKey, as the pipeline does), in memory and in Redis (the machine's, BOURSE_BENCH_REDIS_URL, else
 * the tests' BOURSE_TEST_REDIS_URL, default redis://127.0.0.1:6379, under a prefix of the run's own),
 * in interleaved rounds:
 * - one request at a time: the wall time a request waits for its two decisions (median and p99);
 * - `LIMITS_BENCH_CONCURRENCY` (64) requests in flight, as a busy gateway has them: requests/s,
 *   and the gateway's CPU per request (process.cpuUsage: the client side of Redis included,
 *   Redis's own CPU not).
 * Requests spread over 1,000 IPs and 1,000 keys, so none is refused. The last line is JSON.
 */
import { cpus, loadavg } from 'node:os';
import { createClient } from '@redis/client';
import { MemoryRateLimiter, type RateLimiter } from '../src/api/auth/rate-limit.ts';
import { RedisRateLimiter } from '../src/api/auth/redis-rate-limit.ts';
import { finish, sized } from './results.ts';

const URL =
  process.env['BOURSE_BENCH_REDIS_URL'] ?? process.env['BOURSE_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const REQUESTS = Number(process.env['LIMITS_BENCH_REQUESTS'] ?? sized(20_000, 1_000));
const CONCURRENCY = Number(process.env['LIMITS_BENCH_CONCURRENCY'] ?? 64);
const ROUNDS = Number(process.env['LIMITS_BENCH_ROUNDS'] ?? sized(5, 1));
const SPREAD = 1_000;
const PREFIX = `bourse-bench:${process.pid}:`;

const ips = Array.from({ length: SPREAD }, (_, i) => `10.1.${i >> 8}.${i & 255}`);
const keys = Array.from({ length: SPREAD }, (_, i) => `bench-key-${i}`);

async function request(l: RateLimiter, i: number): Promise<void> {
  const byIp = await l.hitIp(ips[i % SPREAD] as string);
  const byKey = await l.hitKey(keys[(i * 7) % SPREAD] as string);
  if (!byIp.allowed || !byKey.allowed) {
    throw new Error(
      `request ${i} refused (${JSON.stringify([byIp, byKey])}): the bench must not hit a limit`,
    );
  }
}

const median = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] as number;
const quantile = (sorted: Float64Array, q: number): number =>
  sorted[Math.floor(q * (sorted.length - 1))] as number;

/** One request at a time: per-request wall time (µs), median and p99. */
async function sequential(l: RateLimiter): Promise<{ p50: number; p99: number }> {
  const times = new Float64Array(REQUESTS);
  for (let i = 0; i < REQUESTS; i++) {
    const t = performance.now();
    await request(l, i);
    times[i] = (performance.now() - t) * 1000;
  }
  times.sort();
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99) };
}

/** CONCURRENCY requests in flight: requests/s and CPU µs per request. */
async function concurrent(l: RateLimiter): Promise<{ perSecond: number; cpuUs: number }> {
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) await request(l, next++);
    }),
  );
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { perSecond: (REQUESTS / ms) * 1000, cpuUs: (cpu.user + cpu.system) / REQUESTS };
}

const memory = new MemoryRateLimiter();
// The bench measures what Redis costs when it decides: a bound that a loaded machine cannot trip.
const redis = await RedisRateLimiter.open({ url: URL, prefix: PREFIX, timeoutMs: 10_000 });
const results: Record<
  'memory' | 'redis',
  { p50: number[]; p99: number[]; perSecond: number[]; cpuUs: number[] }
> = {
  memory: { p50: [], p99: [], perSecond: [], cpuUs: [] },
  redis: { p50: [], p99: [], perSecond: [], cpuUs: [] },
};
const load = [loadavg()[0] as number];
// A warm-up round each, not counted (JIT, Redis's script cache, connections).
await sequential(memory);
await sequential(redis);
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, l] of [
    ['memory', memory],
    ['redis', redis],
  ] as const) {
    const s = await sequential(l);
    const c = await concurrent(l);
    results[name].p50.push(s.p50);
    results[name].p99.push(s.p99);
    results[name].perSecond.push(c.perSecond);
    results[name].cpuUs.push(c.cpuUs);
  }
  load.push(loadavg()[0] as number);
}
if (redis.failures > 0)
  throw new Error(`${redis.failures} hits were not decided by Redis: the figures are void`);
await redis.close();
const cleanup = createClient({ url: URL });
await cleanup.connect();
for await (const batch of cleanup.scanIterator({ MATCH: `${PREFIX}*`, COUNT: 1000 })) {
  if (batch.length > 0) await cleanup.del(batch);
}
cleanup.destroy();

const summary = Object.fromEntries(
  Object.entries(results).map(([name, r]) => [
    name,
    {
      sequentialP50Us: Number(median(r.p50).toFixed(2)),
      sequentialP99Us: Number(median(r.p99).toFixed(2)),
      concurrentPerSecond: Math.round(median(r.perSecond)),
      cpuUsPerRequest: Number(median(r.cpuUs).toFixed(2)),
    },
  ]),
);
const m = summary['memory'] as {
  sequentialP50Us: number;
  cpuUsPerRequest: number;
  concurrentPerSecond: number;
};
const r = summary['redis'] as {
  sequentialP50Us: number;
  cpuUsPerRequest: number;
  concurrentPerSecond: number;
};
console.log(
  `requests of two decisions each, ${REQUESTS} per round, ${ROUNDS} rounds (medians); concurrency ${CONCURRENCY}`,
);
for (const [name, s] of Object.entries(summary)) console.log(`${name.padEnd(7)} ${JSON.stringify(s)}`);
console.log(
  `redis / memory: wall per request ×${(r.sequentialP50Us / m.sequentialP50Us).toFixed(0)}, ` +
    `CPU per request ×${(r.cpuUsPerRequest / m.cpuUsPerRequest).toFixed(0)} (+${(r.cpuUsPerRequest - m.cpuUsPerRequest).toFixed(1)} µs)`,
);
finish('limits', {
  bench: 'limits',
  ...summary,
  requests: REQUESTS,
  rounds: ROUNDS,
  concurrency: CONCURRENCY,
  cpu: cpus()[0]?.model,
  cores: cpus().length,
  load: load.map((x) => Number(x.toFixed(2))),
});
