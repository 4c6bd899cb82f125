/**
 * The HTTP fuzz suite's long run (`npm run test:long`): FUZZ_LONG_RUNS requests (default 50,000)
 * over fresh venues, FUZZ_LONG_RUNS / 5 each with its own seed, so that many states are visited
 * (markets halted, balances spent, fund passwords locked, …). FUZZ_SEED picks the first seed.
 */
import { test } from 'node:test';
import { fuzz, fuzzTarget } from './http-fuzz.ts';

const SEED = Number(process.env['FUZZ_SEED'] ?? Date.now() % 1_000_000);
const RUNS = Number(process.env['FUZZ_LONG_RUNS'] ?? 50_000);
const VENUES = 5;

for (let i = 0; i < VENUES; i++) {
  const seed = SEED + i * 7919;
  test(`HTTP fuzz, long: venue ${i + 1} of ${VENUES}, ${Math.ceil(RUNS / VENUES)} requests (seed ${seed})`, async () => {
    const target = await fuzzTarget();
    try {
      await fuzz(target, Math.ceil(RUNS / VENUES), seed);
    } finally {
      await target.close();
    }
  });
}
