/** @module differential.long — the engine against the naive reference on 1,000,000 seeded random spot and margin commands. */
import { describe, test } from 'node:test';
import {
  EXTENDED_MARKETS,
  EXTENDED_VENUE,
  runDifferential,
  type DifferentialOptions,
} from './differential-run.ts';

const COMMANDS_PER_SEED = 100_000;
const CHECK_EVERY = Number(process.env.CHECK_EVERY ?? 1_000);

/*
 * Ten seeds of 100,000 commands: longer streams than the default suite's, so books, balances and
 * last prices drift further. Some runs keep deeper books (fewer cancels, up to 600 resting orders)
 * with more users, some have only three users.
 */
const ALL_RUNS: Omit<DifferentialOptions, 'commands' | 'checkEvery'>[] = [
  { seed: 1001, generator: { margin: true } },
  { seed: 1002, generator: { margin: true } },
  { seed: 1003, generator: { margin: true } },
  { seed: 1004, generator: { users: 10, restingCap: 600, cancelPercent: 15, margin: true } },
  { seed: 1005, generator: { users: 3, margin: true } },
  { seed: 1006, generator: { users: 10, restingCap: 600, cancelPercent: 15, margin: true } },
  { seed: 1007, venue: EXTENDED_VENUE, generator: { markets: EXTENDED_MARKETS, margin: true } },
  { seed: 1008, venue: EXTENDED_VENUE, generator: { markets: EXTENDED_MARKETS, margin: true } },
  {
    seed: 1009,
    venue: EXTENDED_VENUE,
    generator: { markets: EXTENDED_MARKETS, users: 10, restingCap: 600, cancelPercent: 15, margin: true },
  },
  { seed: 1010, venue: EXTENDED_VENUE, generator: { markets: EXTENDED_MARKETS, users: 3, margin: true } },
];

// SEED=<n> runs only the chosen seed, on both venues; CHECK_EVERY=<n> sets the state-check interval.
const chosen = process.env.SEED;
const RUNS =
  chosen === undefined
    ? ALL_RUNS
    : [
        { seed: Number(chosen), generator: { margin: true } },
        {
          seed: Number(chosen),
          venue: EXTENDED_VENUE,
          generator: { markets: EXTENDED_MARKETS, margin: true },
        },
      ];

describe('engine vs naive reference, long', () => {
  for (const options of RUNS) {
    const venue = options.venue === undefined ? 'default venue' : 'extended venue';
    test(`seed ${options.seed}, ${venue}: ${COMMANDS_PER_SEED} commands agree`, () => {
      runDifferential({ ...options, commands: COMMANDS_PER_SEED, checkEvery: CHECK_EVERY });
    });
  }
});
