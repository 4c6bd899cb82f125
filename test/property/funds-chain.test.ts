/** @module funds-chain.test — funds on the simulated chain with restarts: four seeded runs of 250 random steps (see funds-run.ts). SEED=<n> reruns one. */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { missingPaths, removeRunDirectories, runFundsSeed } from './funds-run.ts';

const STEPS = 250;
const SEEDS = process.env.SEED === undefined ? [11, 12, 13, 14] : [Number(process.env.SEED)];

after(removeRunDirectories);

describe('funds on the simulated chain, with restarts', () => {
  const paths = new Set<string>();
  for (const seed of SEEDS) {
    test(`seed ${seed}: ${STEPS} random steps keep the wallets and the books equal`, async () => {
      for (const p of await runFundsSeed(seed, STEPS)) paths.add(p);
    });
  }

  test(
    'every path of the deposit and withdrawal state machines was taken',
    { skip: process.env.SEED !== undefined },
    () => {
      assert.deepEqual(missingPaths(paths), [], `paths never taken (seen: ${[...paths].sort().join(', ')})`);
    },
  );
});
