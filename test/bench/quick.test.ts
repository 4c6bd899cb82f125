/**
 * bench:quick's check of a benchmark's output (bench/quick.ts): the last non-blank line must be
 * one JSON object. No benchmark is run.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { lastLineProblem, QUICK_BENCHES, quickJobs } from '../../bench/quick.ts';

test('a last line that is one JSON object passes, trailing blank lines aside', () => {
  assert.equal(lastLineProblem('summary\n{"bench":"ws","rate":1}\n\n'), undefined);
});

test('no output, a last line of text, an array or a bare value fail with the reason', () => {
  assert.equal(lastLineProblem(''), 'it printed nothing');
  assert.match(lastLineProblem('{"a":1}\ndone') ?? '', /last line is not one JSON object: done/);
  assert.match(lastLineProblem('[1,2]') ?? '', /not one JSON object/);
  assert.match(lastLineProblem('42') ?? '', /not one JSON object/);
});

test('every benchmark in bench/ is in the quick pass, and every entry names a file there', async () => {
  const { readdirSync } = await import('node:fs');
  const dir = join(import.meta.dirname, '..', '..', 'bench');
  const benches = readdirSync(dir).filter((f) => f.endsWith('.bench.ts'));
  assert.deepEqual(QUICK_BENCHES.map((b) => b.file).sort(), benches.sort());
  for (const b of QUICK_BENCHES) assert.ok(existsSync(join(dir, b.file)), b.file);
});

test('two benchmarks run at once unless BENCH_QUICK_JOBS says how many; a bad count is refused', () => {
  assert.equal(quickJobs(undefined), 2);
  assert.equal(quickJobs(''), 2);
  assert.equal(quickJobs('1'), 1);
  assert.equal(quickJobs('3'), 3);
  for (const bad of ['0', '-1', '1.5', 'two']) {
    assert.throws(
      () => quickJobs(bad),
      new RangeError(`BENCH_QUICK_JOBS must be a whole number from 1, not '${bad}'`),
    );
  }
});
