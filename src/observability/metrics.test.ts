import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { DEFAULT_VENUE } from '../config/default-venue.ts';
import { Engine } from '../engine/engine.ts';
import { seededRandom, TradingStream } from '../store/trading-stream.ts';
import { Health } from './health.ts';
import { VenueMetrics, type MeasuredCommand } from './metrics.ts';
import { OpenOrderCounts } from './open-orders.ts';

/** Resting orders per market, counted from the engine's own snapshot. */
function restingByMarket(engine: Engine): Map<string, number> {
  const out = new Map<string, number>();
  for (const o of engine.snapshot().orders) out.set(o[2], (out.get(o[2]) ?? 0) + 1);
  return out;
}

function stream(steps: number): TradingStream {
  const s = new TradingStream({ seed: 11, users: 10, startTime: 1_763_769_600_000, meanStepMs: 40 });
  s.setup();
  for (let i = 0; i < steps; i++) s.step();
  return s;
}

describe('open orders per market', () => {
  test('counted from the events of batches of any size, they match the books (and a start from a snapshot)', () => {
    const commands = stream(6_000).recorder.commands;
    const engine = new Engine(DEFAULT_VENUE);
    const counts = new OpenOrderCounts();
    let later: OpenOrderCounts | undefined;
    const random = seededRandom(5);
    let batch: { result: ReturnType<Engine['apply']> }[] = [];
    let checks = 0;
    for (const [i, command] of commands.entries()) {
      batch.push({ result: engine.apply(command) });
      if (random() < 0.2 || i === commands.length - 1) {
        counts.apply(batch);
        later?.apply(batch);
        batch = [];
        const want = restingByMarket(engine);
        for (const m of engine.markets()) {
          assert.equal(counts.count(m.name), want.get(m.name) ?? 0, `${m.name} after seq ${command.seq}`);
          if (later !== undefined) assert.equal(later.count(m.name), want.get(m.name) ?? 0);
        }
        assert.equal(counts.total, engine.openOrderCount);
        checks++;
        if (later === undefined && i > commands.length / 2) {
          later = new OpenOrderCounts(engine.snapshot().orders.map((o) => o[2]));
        }
      }
    }
    assert.ok(
      checks > 500 && engine.openOrderCount > 10,
      `${checks} checks, ${engine.openOrderCount} resting`,
    );
  });
});

function family(families: ParsedFamily[], name: string): ParsedFamily {
  const f = families.find((x) => x.name === name);
  assert.ok(f !== undefined, `no family ${name}`);
  return f;
}

describe('VenueMetrics', () => {
  test('the exposition parses, and commands, latency, flushes and books are counted', async () => {
    const s = stream(2_000);
    const engine = s.recorder.engine;
    const busy = new Map([['PlaceOrder', 3]]);
    // A fixed clock: the latencies observed are exactly the ones written below, however loaded the machine.
    const now = 1_000_000;
    const metrics = new VenueMetrics({
      engine,
      sequencer: { inFlight: 4, busyRefusals: busy, lastSnapshot: { seq: 10, at: 1_700_000_000_000 } },
      journal: { durableSeq: engine.lastSeq, stats: { bytesWritten: 12_345 } },
      history: { writtenSeq: engine.lastSeq - 7 },
      ws: { connections: 2, accepted: 5, pushesSent: 40, repliesSent: 6, dropped: 1 },
      rateLimiter: { size: { locks: 1 } },
      ready: () => true,
      openOrdersAtStart: engine.snapshot().orders.map((o) => o[2]),
      now: () => now,
    });
    const applied: MeasuredCommand[] = [
      { command: { type: 'PlaceOrder' }, result: { result: 'OK', events: [] }, submittedAt: now - 3 },
      {
        command: { type: 'PlaceOrder' },
        result: { result: 'INSUFFICIENT_BALANCE', events: [] },
        submittedAt: now - 0.7,
      },
      { command: { type: 'CancelOrder' }, result: { result: 'OK', events: [] }, submittedAt: now - 1 },
    ];
    metrics.onApplied(applied);
    metrics.onFlushed({ records: 3, syncMs: 1.5 });
    const { text, contentType } = await metrics.scrape();
    assert.match(contentType, /^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusTextFormat(text);

    const commands = family(families, 'bourse_commands_total');
    assert.equal(commands.type, 'COUNTER');
    const count = (kind: string, result: string): string | undefined =>
      commands.metrics.find((m) => m.labels?.['kind'] === kind && m.labels['result'] === result)?.value;
    assert.equal(count('PlaceOrder', 'OK'), '1');
    assert.equal(count('PlaceOrder', 'INSUFFICIENT_BALANCE'), '1');
    assert.equal(count('CancelOrder', 'OK'), '1');
    assert.equal(count('PlaceOrder', 'BUSY'), '3');

    const latency = family(families, 'bourse_order_entry_latency_seconds');
    assert.equal(latency.type, 'HISTOGRAM');
    const [orders] = latency.metrics;
    assert.equal(orders?.count, '2', 'the two orders; not the cancel');
    assert.equal(orders?.buckets?.['0.001'], '1', 'the 0.7 ms one');
    assert.equal(orders?.buckets?.['0.005'], '2', 'and the 3 ms one');
    assert.equal(family(families, 'bourse_journal_flush_records').metrics[0]?.buckets?.['5'], '1');
    assert.equal(family(families, 'bourse_journal_fdatasync_seconds').metrics[0]?.buckets?.['0.002'], '1');

    const value = (name: string, labels: Record<string, string> = {}): number =>
      Number(
        family(families, name).metrics.find((m) =>
          Object.entries(labels).every(([k, v]) => m.labels?.[k] === v),
        )?.value,
      );
    assert.equal(value('bourse_commands_in_flight'), 4);
    assert.equal(value('bourse_history_lag_commands'), 7);
    assert.equal(value('bourse_journal_bytes_total'), 12_345);
    assert.equal(value('bourse_snapshot_last_seq'), 10);
    assert.equal(value('bourse_ready'), 1);
    assert.equal(value('bourse_ws_connections'), 2);
    assert.equal(value('bourse_ws_messages_sent_total', { kind: 'push' }), 40);
    assert.equal(value('bourse_ws_slow_consumers_dropped_total'), 1);
    assert.equal(value('bourse_rate_limit_locked_ips'), 1);
    const resting = restingByMarket(engine);
    for (const m of engine.markets()) {
      assert.equal(value('bourse_open_orders', { market: m.name }), resting.get(m.name) ?? 0, m.name);
      const depth = engine.depth(m.name, 1_000_000);
      assert.equal(value('bourse_book_levels', { market: m.name, side: 'bid' }), depth?.bids.length);
      assert.equal(value('bourse_book_levels', { market: m.name, side: 'ask' }), depth?.asks.length);
    }
    for (const name of [
      'process_resident_memory_bytes',
      'process_cpu_seconds_total',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_gc_duration_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      family(families, name);
    }
  });
});

describe('Health', () => {
  const sources = () => ({
    engine: { lastSeq: 100 },
    journal: { durableSeq: 100, failure: null as Error | null },
    sequencer: { failure: undefined as Error | undefined },
    history: { writtenSeq: 90, failure: undefined as Error | undefined },
  });

  test('not ready while starting or recovering (with the replay progress), ready once running', () => {
    const health = new Health({ maxHistoryLag: 50 });
    assert.equal(health.ready().ready, false);
    health.recovering();
    health.replayProgress(2_000, 10_000);
    assert.deepEqual(health.ready(), {
      ready: false,
      phase: 'recovering',
      checks: {
        recovered: { ok: false, replay: { replayed: 2_000, total: 10_000 } },
        journal: { ok: false },
        history: { ok: false },
      },
    });
    assert.equal(health.alive().status, 'alive');
    health.running(sources());
    assert.deepEqual(health.ready(), {
      ready: true,
      phase: 'running',
      checks: {
        recovered: { ok: true },
        journal: { ok: true, durableSeq: 100 },
        history: { ok: true, lag: 10, maxLag: 50 },
      },
    });
    health.stopping();
    assert.equal(health.ready().ready, false);
  });

  test('a failed journal, a stopped sequencer, a failed or lagging history: not ready', () => {
    const cases: [string, (s: ReturnType<typeof sources>) => void, 'journal' | 'history'][] = [
      ['journal', (s) => (s.journal.failure = new Error('ENOSPC: no space left on device')), 'journal'],
      ['sequencer', (s) => (s.sequencer.failure = new Error('engine invariant broken at seq 7')), 'journal'],
      ['history failed', (s) => (s.history.failure = new Error('worker died')), 'history'],
      ['history behind', (s) => (s.history.writtenSeq = 40), 'history'],
    ];
    for (const [name, breakIt, check] of cases) {
      const health = new Health({ maxHistoryLag: 50 });
      const s = sources();
      health.running(s);
      assert.equal(health.isReady(), true, name);
      breakIt(s);
      const report = health.ready();
      assert.equal(report.ready, false, name);
      assert.equal(report.checks[check].ok, false, name);
    }
    const health = new Health({ maxHistoryLag: 50 });
    health.running(sources());
    health.failed('journal failed after durable seq 100');
    assert.deepEqual(
      { status: health.alive().status, reason: health.alive().reason },
      { status: 'failed', reason: 'journal failed after durable seq 100' },
    );
  });
});
