/**
 * The HTTP fuzz suite's default run (`npm test`): a few thousand generated requests over every
 * endpoint. FUZZ_SEED picks the draw (a failure names its seed and request); the long run is
 * http-fuzz.long.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SIGNED_ENDPOINTS } from '../../src/api/http/signed/index.ts';
import { fuzz, fuzzTarget } from './http-fuzz.ts';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20261124);
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 4_000);

test(`HTTP fuzz: ${RUNS} requests over every endpoint and parameter (seed ${SEED}): JSON, the interface's codes, no 5xx, refusals change nothing`, async () => {
  const target = await fuzzTarget();
  try {
    // The catalogue is the declarations': every signed endpoint with exactly its declared parameters.
    const catalogued = new Map(target.endpoints.map((e) => [e.path, e]));
    for (const e of SIGNED_ENDPOINTS) {
      const entry = catalogued.get(`/api/${e.method}`);
      assert.ok(entry !== undefined, `${e.method} is not fuzzed`);
      assert.deepEqual(Object.keys(entry.params), Object.keys(e.params), e.method);
    }
    const seen = await fuzz(target, RUNS, SEED);
    // Every endpoint was reached, and the signed ones past authentication to their own checks.
    for (const endpoint of target.endpoints)
      assert.ok(seen.has(endpoint.path), `${endpoint.path} was never drawn`);
    for (const endpoint of target.endpoints.filter((e) => e.kind === 'signed')) {
      const codes = [...(seen.get(endpoint.path)?.keys() ?? [])];
      assert.ok(
        codes.some((c) => ![1003, 3007, 3006, 1012].includes(c)),
        `${endpoint.path} never got past authentication: ${codes.join(', ')}`,
      );
    }
  } finally {
    await target.close();
  }
});
