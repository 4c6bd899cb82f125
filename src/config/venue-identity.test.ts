import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { VenueConfig } from '../domain/specs.ts';
import { DEFAULT_VENUE } from './default-venue.ts';
import { describeGenesisChanges, genesisHash } from './venue-identity.ts';

const copy = (): VenueConfig => JSON.parse(JSON.stringify(DEFAULT_VENUE)) as VenueConfig;

describe('venue identity', () => {
  it('hashes the genesis by value, not by layout or key order', () => {
    const reordered = Object.fromEntries(Object.entries(copy()).reverse()) as unknown as VenueConfig;
    assert.equal(genesisHash(reordered), genesisHash(DEFAULT_VENUE));
    const edited = copy();
    (edited.settings as { cancelAllAfterMs: number }).cancelAllAfterMs += 1;
    assert.notEqual(genesisHash(edited), genesisHash(DEFAULT_VENUE));
  });

  it('names each change in the operator’s words', () => {
    const edited = copy() as { -readonly [K in keyof VenueConfig]: VenueConfig[K] };
    const [first, second, ...rest] = edited.markets;
    edited.markets = [second!, { ...first!, takerFee: first!.takerFee + 1 }, ...rest];
    edited.coins = edited.coins.slice(0, -1);
    edited.settings = { ...edited.settings, cancelAllAfterMs: 1 };
    const lastCoin = DEFAULT_VENUE.coins.at(-1)!.name;
    assert.deepEqual(describeGenesisChanges(DEFAULT_VENUE, edited).sort(), [
      `coin ${lastCoin} removed`,
      `market ${first!.name} takerFee changed from ${first!.takerFee} to ${first!.takerFee + 1}`,
      `setting cancelAllAfterMs changed from ${DEFAULT_VENUE.settings.cancelAllAfterMs} to 1`,
    ]);
    assert.deepEqual(describeGenesisChanges(DEFAULT_VENUE, copy()), []);
    const swapped = copy() as { -readonly [K in keyof VenueConfig]: VenueConfig[K] };
    swapped.markets = [...swapped.markets].reverse();
    assert.deepEqual(describeGenesisChanges(DEFAULT_VENUE, swapped), ['markets reordered']);
  });
});
