/**
 * The console's reader of the Prometheus text format (web/src/admin/prom.ts), checked against a
 * reference parser (parse-prometheus-text-format) on what prom-client writes: the default process
 * metrics and families with awkward label values.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { mean, parseMetrics, sum } from '../../web/src/admin/prom.ts';

async function scrape(): Promise<string> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const commands = new Counter({
    name: 'bourse_commands_total',
    help: 'Commands',
    labelNames: ['kind', 'result'],
    registers: [registry],
  });
  commands.inc({ kind: 'PlaceOrder', result: 'OK' }, 7);
  commands.inc({ kind: 'PlaceOrder', result: 'BUSY' }, 2);
  commands.inc({ kind: 'Cancel "all"', result: 'a\\b\nc' }, 1);
  new Gauge({ name: 'bourse_ws_connections', help: 'Connections', registers: [registry] }).set(3);
  const latency = new Histogram({
    name: 'bourse_order_entry_latency_seconds',
    help: 'Latency',
    buckets: [0.001, 0.01, 0.1],
    registers: [registry],
  });
  for (const v of [0.0005, 0.002, 0.05]) latency.observe(v);
  return registry.metrics();
}

test('reads every counter and gauge sample as the reference parser does, labels unescaped', async () => {
  const text = await scrape();
  const ours = parseMetrics(text);
  let compared = 0;
  for (const family of parsePrometheusTextFormat(text)) {
    assert.equal(ours.types.get(family.name), family.type.toLowerCase(), family.name);
    if (family.type !== 'COUNTER' && family.type !== 'GAUGE') continue;
    for (const m of family.metrics) {
      const labels = m.labels ?? {};
      const found = ours.samples.filter(
        (s) => s.name === family.name && JSON.stringify(s.labels) === JSON.stringify(labels),
      );
      assert.equal(found.length, 1, `${family.name} ${JSON.stringify(labels)}`);
      // The reference reads values as text: `Nan` (prom-client's NaN) is NaN here.
      assert.deepEqual(found[0]?.value, /^nan$/i.test(String(m.value)) ? NaN : Number(m.value), family.name);
      compared++;
    }
  }
  assert.ok(compared > 10, `compared ${compared} samples`);
  assert.equal(sum(ours, 'bourse_commands_total'), 10);
  assert.equal(sum(ours, 'bourse_commands_total', { result: 'BUSY' }), 2);
  assert.equal(sum(ours, 'bourse_commands_total', { kind: 'Cancel "all"', result: 'a\\b\nc' }), 1);
  assert.equal(sum(ours, 'bourse_ws_connections'), 3);
  assert.equal(sum(ours, 'no_such_metric'), undefined);
});

test("a histogram's mean is its sum over its count, as the reference reads them", async () => {
  const text = await scrape();
  const reference = parsePrometheusTextFormat(text).find(
    (f) => f.name === 'bourse_order_entry_latency_seconds',
  );
  const m = reference?.metrics[0];
  assert.ok(m?.sum !== undefined && m.count !== undefined);
  const ours = parseMetrics(text);
  assert.equal(sum(ours, 'bourse_order_entry_latency_seconds_count'), Number(m.count));
  assert.equal(mean(ours, 'bourse_order_entry_latency_seconds'), Number(m.sum) / Number(m.count));
  assert.equal(sum(ours, 'bourse_order_entry_latency_seconds_bucket', { le: '+Inf' }), 3);
  assert.equal(mean(ours, 'nothing_here'), undefined);
});

test('lines that are not samples are skipped, not misread', () => {
  const ours = parseMetrics(
    [
      '# HELP x_total things',
      '# TYPE x_total counter',
      'x_total 4 1700000000000',
      'x_total{broken="no end} 5',
      '{nolabel} 1',
      'y NaN',
      'z +Inf',
      'v -inf',
      'u Nan',
      'w not-a-number',
      '',
    ].join('\n'),
  );
  assert.deepEqual(
    ours.samples.map((s) => [s.name, s.value]),
    [
      ['x_total', 4],
      ['y', NaN],
      ['z', Infinity],
      ['v', -Infinity],
      ['u', NaN],
    ],
  );
  assert.equal(ours.types.get('x_total'), 'counter');
});
