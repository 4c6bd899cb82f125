/**
 * @module state-hash.test — golden values: seeded command streams must leave the engine in exactly
 * the state (hash and snapshot bytes) and with exactly the replies and events that main gave
 * before the engine was split into modules (issue 14). A refactor that changes any of them changed
 * behaviour. The state, snapshot and reply values are main's at 83e7224 (before issue 13); the
 * messages' digest is main's at 5c79437 (issue 13 gave refusals their numbers). Issue 16 changed the
 * state, snapshot and reply values once: a user's registration time is part of the state
 * (`userRecords`); with it left out they are main's as before. The reply digests changed once
 * more: margin opened (issue 14), so the streams' orders with acctType 1 or 2, refused before as
 * ACCOUNT_TYPE_NOT_SUPPORTED, are now refused as their empty margin accounts' INSUFFICIENT_BALANCE
 * (or MARKET_HALTED); checked command by command against main, no other reply and no state changed.
 * Issue 29 changed the default venue's state and snapshot values once more: under its depth mark
 * rule every traded market's mark is kept and in the snapshot, owed in or not; every reply of both
 * default-venue streams was checked unchanged against main (the runDigest holds state hashes too).
 * They may change only with a change of behaviour that a commit message names.
 *
 * Run with GOLDEN_PRINT=1 to print the values the current code gives.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import type { Command, SequencedCommand } from '../../src/domain/commands.ts';
import type { VenueConfig } from '../../src/domain/specs.ts';
import { Engine } from '../../src/engine/engine.ts';
import { CommandGenerator } from '../property/command-generator.ts';
import { EXTENDED_MARKETS, EXTENDED_VENUE } from '../property/differential-run.ts';
import { NaiveEngine } from '../reference/naive-engine.ts';

const COMMANDS = 6_000;
/** The running digest takes the state hash after every this many commands. */
const HASH_EVERY = 500;

interface Golden {
  /** `stateHash()` after the last command. */
  readonly stateHash: string;
  /** SHA-256 and length of the snapshot as the snapshot store writes it (`JSON.stringify`). */
  readonly snapshotSha256: string;
  readonly snapshotBytes: number;
  /** SHA-256 over every reply but its message (result, ids, events), and the state hash every HASH_EVERY commands. */
  readonly runDigest: string;
  /** SHA-256 over every refusal's message. */
  readonly messageDigest: string;
}

/**
 * Operator commands the generator does not make, appended to every stream: coins, markets,
 * statuses, keys (with and without strict mode, one deleted), the demo and its faucet, and
 * refusals of each.
 */
function operatorTail(users: number): Command[] {
  const btc = DEFAULT_VENUE.coins.find((c) => c.name === 'btc');
  const market = DEFAULT_VENUE.markets.find((m) => m.name === 'btc_usdt');
  if (btc === undefined || market === undefined) throw new Error('default venue changed');
  const perms = { asset: true, entrust: true, money: false, lever: false };
  return [
    { type: 'UpsertCoin', coin: { ...btc, enName: 'Bitcoin', canWithdraw: false } },
    { type: 'UpsertCoin', coin: { ...btc, unitDecimal: 6 } },
    { type: 'UpsertCoin', coin: { ...btc, name: 'doge', enName: 'DOGE', showName: 'DOGE' } },
    { type: 'UpsertMarket', market: { ...market, minSize: market.minSize + 1, makerFee: 500 } },
    { type: 'UpsertMarket', market: { ...market, priceScale: market.priceScale + 1 } },
    { type: 'UpsertMarket', market: { ...market, name: 'doge_usdt', base: 'doge' } },
    { type: 'SetMarketStatus', market: 'doge_usdt', status: 'halted' },
    { type: 'SetMarketStatus', market: 'nope_usdt', status: 'halted' },
    {
      type: 'CreateApiKey',
      userId: 1,
      accessKey: 'golden-key-1',
      sealedSecret: 's1',
      permissions: perms,
      ips: [],
    },
    {
      type: 'CreateApiKey',
      userId: 2,
      accessKey: 'golden-key-2',
      sealedSecret: 's2',
      permissions: { ...perms, money: true },
      ips: ['127.0.0.1'],
      replayProtection: true,
    },
    {
      type: 'CreateApiKey',
      userId: 2,
      accessKey: 'golden-key-2',
      sealedSecret: 's',
      permissions: perms,
      ips: [],
    },
    {
      type: 'CreateApiKey',
      userId: 9_999,
      accessKey: 'golden-key-3',
      sealedSecret: 's',
      permissions: perms,
      ips: [],
    },
    { type: 'DeleteApiKey', accessKey: 'golden-key-1' },
    { type: 'DeleteApiKey', accessKey: 'golden-key-1' },
    { type: 'RegisterUser', name: 'Golden' },
    { type: 'StartDemo', faucet: [{ coin: 'usdt', perHour: 1_000_000_000 }] },
    { type: 'MarkDemoUser', userId: users + 1 },
    { type: 'DemoFaucet', userId: users + 1, coin: 'usdt', amount: 500_000_000 },
    { type: 'DemoFaucet', userId: users + 1, coin: 'usdt', amount: 600_000_000 },
    { type: 'DemoFaucet', userId: 1, coin: 'usdt', amount: 1 },
    { type: 'StopDemo' },
    { type: 'SetFeePreference', userId: users + 1, usePlatformCoin: true },
  ];
}

/**
 * `pooled`: the engine's event pool on (issue 34, src/engine/event-pool.ts) and recycled after each
 * reply is digested, as the sequencer does after each batch: reused events must read as fresh ones.
 */
function runGolden(
  seed: number,
  venue: VenueConfig,
  markets: readonly string[] | undefined,
  pooled: boolean,
): Golden {
  const engine = new Engine(venue);
  if (pooled) engine.eventPool.enable();
  const naive = new NaiveEngine(venue);
  const generator = new CommandGenerator(seed, venue, markets === undefined ? {} : { markets });
  const digest = createHash('sha256');
  const messages = createHash('sha256');
  let last: SequencedCommand | undefined;
  const record = (cmd: SequencedCommand): void => {
    const r = engine.apply(cmd);
    const { message, ...rest } = r;
    digest.update(`${JSON.stringify(rest)}\n`);
    messages.update(`${message ?? ''}\n`);
    if (pooled) engine.eventPool.recycle();
    last = cmd;
  };
  for (let i = 1; i <= COMMANDS; i++) {
    const cmd = generator.next(naive);
    naive.apply(cmd);
    record(cmd);
    if (i % HASH_EVERY === 0) digest.update(engine.stateHash());
  }
  const users = engine.snapshot().nextUserId - 1;
  let { seq, time } = last as SequencedCommand;
  for (const cmd of operatorTail(users)) record({ ...cmd, seq: ++seq, time: (time += 1_000) });
  engine.assertInvariants();
  const snapshot = engine.snapshot();
  const bytes = Buffer.from(JSON.stringify(snapshot));
  const restored = Engine.restore(JSON.parse(bytes.toString()));
  assert.equal(restored.stateHash(), engine.stateHash(), `seed ${seed}: the snapshot does not restore`);
  return {
    stateHash: engine.stateHash(snapshot),
    snapshotSha256: createHash('sha256').update(bytes).digest('hex'),
    snapshotBytes: bytes.length,
    runDigest: digest.digest('hex'),
    messageDigest: messages.digest('hex'),
  };
}

const CASES: { name: string; seed: number; extended: boolean; golden: Golden }[] = [
  {
    name: 'seed 11, default venue',
    seed: 11,
    extended: false,
    golden: {
      stateHash: 'edfbdddf855acba6869ce4b428ca147953185ead2d7e2886c5e2f2218825a165',
      snapshotSha256: 'edfbdddf855acba6869ce4b428ca147953185ead2d7e2886c5e2f2218825a165',
      snapshotBytes: 77103,
      runDigest: 'f9ab3a7bb880d03b59a04c314bfa3e6f06666535aa2ddb3c976a1496b39599e8',
      messageDigest: '170c795eadbecc3fc452abca719c67ae11d75a3bcc8a32f4f51a5e0b09842781',
    },
  },
  {
    name: 'seed 12, default venue',
    seed: 12,
    extended: false,
    golden: {
      stateHash: '5538843ffd5a0ed2c3f2a871be741356551a6d07473c35a2818fce34d0357790',
      snapshotSha256: '5538843ffd5a0ed2c3f2a871be741356551a6d07473c35a2818fce34d0357790',
      snapshotBytes: 76997,
      runDigest: '9cb05e94238bdfcaf3b5959d77abccbdddde727fdd49a419cfd2d63da6fd3f78',
      messageDigest: '6bdc1721021c9e6097bc5a1dc950bb4190a03c748403e2f29bd89b4702c95695',
    },
  },
  {
    name: 'seed 13, extended venue',
    seed: 13,
    extended: true,
    golden: {
      stateHash: '453312323efb12ce0470a261650d0ddf86e0c3f66c821a7c2037e98b675ae23f',
      snapshotSha256: '453312323efb12ce0470a261650d0ddf86e0c3f66c821a7c2037e98b675ae23f',
      snapshotBytes: 58119,
      runDigest: 'd88c0a338e0bed173deefa0c689b82ffc136d68bd72d6ac2372d85fc500c58d3',
      messageDigest: '1c491f03dadde11280e8aae492180e0dbeda6830ee89b4dba2e82d2d79d61e64',
    },
  },
];

describe('golden state hashes (behaviour unchanged by the engine split, issue 14)', () => {
  for (const c of CASES) {
    for (const pooled of [false, true]) {
      const how = pooled ? ', events from the recycled pool' : '';
      test(`${c.name}: ${COMMANDS} commands give the pinned state, snapshot and replies${how}`, () => {
        const got = c.extended
          ? runGolden(c.seed, EXTENDED_VENUE, EXTENDED_MARKETS, pooled)
          : runGolden(c.seed, DEFAULT_VENUE, undefined, pooled);
        if (process.env.GOLDEN_PRINT === '1') console.log(c.name, how, JSON.stringify(got));
        assert.deepEqual(got, c.golden);
      });
    }
  }
});
