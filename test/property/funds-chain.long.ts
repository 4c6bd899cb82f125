/** @module funds-chain.long — funds on the simulated chain with restarts: ten seeded runs of 1,000 random steps (see funds-run.ts). */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { missingPaths, removeRunDirectories, runFundsSeed } from './funds-run.ts';

const STEPS = 1_000;
const SEEDS = [101, 102, 103, 104, 105, 106, 107, 108, 109, 110];

after(removeRunDirectories);

describe('funds on the simulated chain, with restarts, long', () => {
  const paths = new Set<string>();
  for (const seed of SEEDS) {
    test(`seed ${seed}: ${STEPS} random steps keep the wallets and the books equal`, async () => {
      for (const p of await runFundsSeed(seed, STEPS)) paths.add(p);
      removeRunDirectories();
    });
  }

  test('every path of the deposit and withdrawal state machines was taken', () => {
    assert.deepEqual(missingPaths(paths), []);
  });
});
