/**
 * @module differential-long — the long suite's differential runs: the engine against the naive
 * reference on 1,000,000 seeded random spot and margin commands, with price shocks and
 * liquidations, in two files (`differential.long.ts` on the default venue,
 * `differential-extended.long.ts` on the extended one) so that the runner can take them side by
 * side on two cores.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EXTENDED_MARKETS,
  EXTENDED_VENUE,
  addStats,
  emptyStats,
  riskSummary,
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
  { seed: 1001, generator: { margin: true, shocks: true } },
  { seed: 1002, generator: { margin: true, shocks: true } },
  { seed: 1003, generator: { margin: true, shocks: true } },
  // Attacks on the margin limits (issue 29, limit-attacks.ts) ride on two of the runs.
  {
    seed: 1004,
    generator: { users: 10, restingCap: 600, cancelPercent: 15, margin: true, shocks: true, attacks: true },
  },
  { seed: 1005, generator: { users: 3, margin: true, shocks: true } },
  { seed: 1006, generator: { users: 10, restingCap: 600, cancelPercent: 15, margin: true, shocks: true } },
  { seed: 1007, venue: EXTENDED_VENUE, generator: { markets: EXTENDED_MARKETS, margin: true, shocks: true } },
  { seed: 1008, venue: EXTENDED_VENUE, generator: { markets: EXTENDED_MARKETS, margin: true, shocks: true } },
  {
    seed: 1009,
    venue: EXTENDED_VENUE,
    generator: {
      markets: EXTENDED_MARKETS,
      users: 10,
      restingCap: 600,
      cancelPercent: 15,
      margin: true,
      shocks: true,
      attacks: true,
    },
  },
  {
    seed: 1010,
    venue: EXTENDED_VENUE,
    generator: { markets: EXTENDED_MARKETS, users: 3, margin: true, shocks: true },
  },
];

// SEED=<n> runs only the chosen seed, on both venues; CHECK_EVERY=<n> sets the state-check interval.
const chosen = process.env.SEED;
const RUNS =
  chosen === undefined
    ? ALL_RUNS
    : [
        { seed: Number(chosen), generator: { margin: true, shocks: true } },
        {
          seed: Number(chosen),
          venue: EXTENDED_VENUE,
          generator: { markets: EXTENDED_MARKETS, margin: true, shocks: true },
        },
      ];

export type LongVenue = 'default venue' | 'extended venue';

const venueOf = (options: (typeof ALL_RUNS)[number]): LongVenue =>
  options.venue === undefined ? 'default venue' : 'extended venue';

/** The runs of the long suite on `venue` (all of them, or `SEED`'s), with their risk summary. */
export function describeLongDifferential(venue: LongVenue): void {
  describe(`engine vs naive reference, long, ${venue}`, () => {
    const total = emptyStats();
    for (const options of RUNS.filter((o) => venueOf(o) === venue)) {
      test(`seed ${options.seed}, ${venue}: ${COMMANDS_PER_SEED} commands agree`, (t) => {
        const run = runDifferential({ ...options, commands: COMMANDS_PER_SEED, checkEvery: CHECK_EVERY });
        t.diagnostic(riskSummary(run));
        addStats(total, run);
      });
    }
    test('risk summary', () => {
      console.log(`long differential run, ${venue}: ${riskSummary(total)}`);
      assert.ok(total.minCrossRiskRateBp > 10_800, 'a cross account reached its liquidation line');
    });
  });
}
