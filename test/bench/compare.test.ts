/**
 * bench:compare's parsing and table (bench/compare.ts) and the record a run appends
 * (bench/results.ts): no benchmark is run and nothing is timed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compareTable, flatten, parseResults } from '../../bench/compare.ts';
import { finish, runRecord, type BenchRecord } from '../../bench/results.ts';

const record = (bench: string, commit: string, figures: Record<string, unknown>): BenchRecord => ({
  bench,
  commit,
  dirty: false,
  date: '2026-12-01T14:00:00.000Z',
  machine: { host: 'h', cpu: 'c', cores: 2, memoryGiB: 4, node: 'v24' },
  loadAverage: [1.5, 1, 0.5],
  uptimeSeconds: 100,
  figures,
});

test('parseResults reads one record a line and skips blank lines', () => {
  const a = record('ws', 'a'.repeat(40), { messagesPerSecond: 100 });
  const b = record('http', 'b'.repeat(40), { ordersPerSecond: 5 });
  const parsed = parseResults(`${JSON.stringify(a)}\n\n${JSON.stringify(b)}\n`);
  assert.deepEqual(parsed, [a, b]);
  assert.deepEqual(parseResults(''), []);
});

test('parseResults names the line that is not JSON, or not a record', () => {
  const good = JSON.stringify(record('ws', 'a', {}));
  assert.throws(() => parseResults(`${good}\n{oops`), /line 2 is not JSON/);
  assert.throws(() => parseResults(`${good}\n{"bench":"ws"}`), /line 2 is not a benchmark record/);
  assert.throws(() => parseResults('null'), /line 1 is not a benchmark record/);
});

test('flatten turns nested figures into a.b rows', () => {
  assert.deepEqual(flatten({ a: 1, b: { c: 'x', d: [2, 3] }, e: null }), [
    ['a', '1'],
    ['b.c', 'x'],
    ['b.d.0', '2'],
    ['b.d.1', '3'],
    ['e', 'null'],
  ]);
});

test('compareTable sets the last runs of one benchmark side by side, oldest first', () => {
  const records = [
    record('ws', '1'.repeat(40), { rate: 10, p99: 5 }),
    record('http', '9'.repeat(40), { rate: 999 }),
    record('ws', '2'.repeat(40), { rate: 20, p99: 6 }),
    { ...record('ws', '3'.repeat(40), { rate: 30, extra: 'y' }), dirty: true },
  ];
  const lines = compareTable(records, 'ws', 2).split('\n');
  assert.match(lines[0] ?? '', /^commit\s+2{12}\s+3{12}\+$/);
  assert.match(lines[1] ?? '', /^date\s+2026-12-01 14:00\s+2026-12-01 14:00$/);
  assert.match(lines[2] ?? '', /^load average\s+1\.5 1 0\.5\s+1\.5 1 0\.5$/);
  assert.match(lines[3] ?? '', /^-+$/);
  assert.deepEqual(
    lines.slice(4).map((l) => l.split(/\s+/)),
    [
      ['rate', '20', '30'],
      ['p99', '6', ''],
      ['extra', '', 'y'],
    ].map((row) => row.filter((cell) => cell !== '')),
  );
  assert.ok(!lines.join('\n').includes('999'), "another benchmark's runs are left out");
});

test('compareTable says which benchmarks were recorded when the one asked for was not', () => {
  assert.equal(
    compareTable([record('ws', 'a', {}), record('http', 'b', {})], 'venue'),
    "no recorded runs of 'venue' (recorded: http, ws)",
  );
  assert.equal(compareTable([], 'venue'), "no recorded runs of 'venue'");
});

test('finish appends a record with BENCH_RECORD=1, and a parsed record has the figures', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-results-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'results.jsonl');
  const saved = process.env['BENCH_RECORD'];
  const log = t.mock.method(console, 'log', () => undefined);
  t.mock.method(console, 'error', () => undefined);
  try {
    process.env['BENCH_RECORD'] = '1';
    finish('unit', { rate: 1 }, file);
    finish('unit', { rate: 2 }, file);
  } finally {
    if (saved === undefined) delete process.env['BENCH_RECORD'];
    else process.env['BENCH_RECORD'] = saved;
  }
  assert.equal(log.mock.calls.at(-1)?.arguments[0], '{"rate":2}', 'the last line is the figures');
  const parsed = parseResults(readFileSync(file, 'utf8'));
  assert.deepEqual(
    parsed.map((r) => [r.bench, r.figures]),
    [
      ['unit', { rate: 1 }],
      ['unit', { rate: 2 }],
    ],
  );
  const r = runRecord('unit', {});
  assert.match(r.commit, /^([0-9a-f]{40}|unknown)$/);
  assert.equal(r.loadAverage.length, 3);
  assert.ok(r.machine.cores >= 1);
});
