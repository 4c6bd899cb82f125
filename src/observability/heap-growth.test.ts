import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

/**
 * A child process that keeps ~60 MiB live and promotes garbage steadily (a ring of objects that
 * outlive a few scavenges), with or without the bound: the old generation's largest size over
 * its live size after a full collection.
 */
function oldGenerationPeakRatio(bounded: boolean): number {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { boundHeapGrowth } from ${JSON.stringify(new URL('./heap-growth.ts', import.meta.url).href)};
    if (${bounded}) boundHeapGrowth();
    const old = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size;
    const live = [];
    for (let i = 0; i < 500_000; i++) live.push({ a: i, b: 'x' + i, c: [i] });
    const ring = new Array(300_000);
    let peak = 0;
    for (let k = 0; k < 3_000; k++) {
      for (let j = 0; j < 2_000; j++) ring[(k * 2_000 + j) % ring.length] = { k, j, s: 'y' + j, d: [j, k] };
      if (k % 10 === 0) peak = Math.max(peak, old());
    }
    globalThis.gc();
    console.log(peak / getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_used_size);
    live.length = 0;
  `;
  const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 120_000,
    killSignal: 'SIGKILL',
  });
  assert.equal(run.status, 0, run.stderr);
  return Number(run.stdout.trim());
}

test("with the bound the old generation's peak past its live data is well below V8's own (its factor goes to 4)", () => {
  // Measured: 3.6 against 8.0 (V8 also lets the heap grow while it marks, and by a minimum step).
  const bounded = oldGenerationPeakRatio(true);
  const unbounded = oldGenerationPeakRatio(false);
  assert.ok(
    bounded < unbounded * 0.75,
    `the old generation peaked at ${bounded.toFixed(2)} × its live data bounded, ${unbounded.toFixed(2)} unbounded`,
  );
});
