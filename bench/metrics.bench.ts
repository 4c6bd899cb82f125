/**
 * @module metrics.bench — what the Prometheus metrics cost in process, without the HTTP stack's
 * noise: the per-batch listener (`VenueMetrics.onApplied`: commands by kind and result, order
 * entry latency, open orders per market) in ns per applied command, against the engine's own
 * apply; and the time of one scrape (`/metrics` text) with the book the stream left.
 * The last line is one JSON object.
 */
import { cpus, loadavg } from 'node:os';
import { DEFAULT_VENUE } from '../src/config/default-venue.ts';
import { Engine } from '../src/engine/engine.ts';
import { VenueMetrics, type MeasuredCommand } from '../src/observability/metrics.ts';
import { TradingStream } from '../src/store/trading-stream.ts';
import { finish, sized } from './results.ts';

const COMMANDS = Number(process.env['METRICS_BENCH_COMMANDS'] ?? sized(200_000, 10_000));
/** Commands per applied batch, as group commit hands them over under load. */
const BATCH = Number(process.env['METRICS_BENCH_BATCH'] ?? 64);
const ROUNDS = sized(5, 1);

const stream = new TradingStream({ seed: 3, users: 50, startTime: 1_763_769_600_000, meanStepMs: 5 });
stream.setup();
while (stream.recorder.commands.length < COMMANDS) stream.step();
const commands = stream.recorder.commands;

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] as number;
}

const applyNs: number[] = [];
const listenerNs: number[] = [];
let scrapeMs = 0;
let scrapeBytes = 0;
for (let round = 0; round < ROUNDS; round++) {
  const engine = new Engine(DEFAULT_VENUE);
  const metrics = new VenueMetrics({
    engine,
    sequencer: { inFlight: 0, busyRefusals: new Map(), lastSnapshot: undefined },
    journal: { durableSeq: 0, stats: { bytesWritten: 0 } },
    history: { writtenSeq: 0 },
    ready: () => true,
    openOrdersAtStart: [],
  });
  let applyTime = 0;
  let listenerTime = 0;
  for (let at = 0; at < commands.length; at += BATCH) {
    const batch: MeasuredCommand[] = [];
    const t0 = performance.now();
    for (const command of commands.slice(at, at + BATCH)) {
      batch.push({ command, result: engine.apply(command), submittedAt: t0 });
    }
    const t1 = performance.now();
    metrics.onApplied(batch);
    metrics.onFlushed({ records: batch.length, syncMs: 0.5 });
    listenerTime += performance.now() - t1;
    applyTime += t1 - t0;
  }
  applyNs.push((applyTime * 1e6) / commands.length);
  listenerNs.push((listenerTime * 1e6) / commands.length);
  if (metrics.openOrders !== engine.openOrderCount) throw new Error('open orders diverged');
  const t = performance.now();
  const { text } = await metrics.scrape();
  scrapeMs = performance.now() - t;
  scrapeBytes = text.length;
  metrics.registry.clear();
}

console.log(
  `bench:metrics — node ${process.version}, ${cpus()[0]?.model}, load average ${loadavg()[0]?.toFixed(2)}, ` +
    `${commands.length} commands in batches of ${BATCH}, ${ROUNDS} rounds`,
);
console.log(
  `engine apply (with result objects)  ${median(applyNs).toFixed(0)} ns/command (median of rounds)`,
);
console.log(
  `metrics listener                    ${median(listenerNs).toFixed(0)} ns/command (median of rounds)`,
);
console.log(`one scrape                          ${scrapeMs.toFixed(1)} ms, ${scrapeBytes} bytes`);
finish('metrics', {
  bench: 'metrics',
  commands: commands.length,
  batch: BATCH,
  applyNsPerCommand: Math.round(median(applyNs)),
  listenerNsPerCommand: Math.round(median(listenerNs)),
  scrapeMs: Number(scrapeMs.toFixed(1)),
});
