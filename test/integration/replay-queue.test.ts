/**
 * A replay through the real sequencer and engine, on a clock the test moves: a user's resting
 * bids fill when, and only when, the history trades at or through their price, in queue order
 * (an order placed behind a larger one at the same price fills after it); the maker's ladder
 * quotes around the replayed price; the journal alone gives the same state hash on recovery, and
 * a resumed replay goes on from the position the journal shows.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import { BUY, SELL, type Command } from '../../src/domain/commands.ts';
import { FileJournal } from '../../src/journal/file-journal.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { Replays } from '../../src/replay/run-replay.ts';
import { recover } from '../../src/sequencer/recovery.ts';
import { Sequencer } from '../../src/sequencer/sequencer.ts';
import { creditCommand } from '../fixtures/engine-driver.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';
import { T0, writeFiveTrades } from '../fixtures/replay-history.ts';
import { untilTrue } from '../fixtures/until.ts';

fileTimeLimit(import.meta.url);

const root = mkdtempSync(join(tmpdir(), 'bourse-replay-queue-'));
after(() => rmSync(root, { recursive: true, force: true }));

const file = writeFiveTrades(root);

async function openVenue(dir: string, clock: () => number) {
  const journal = FileJournal.open(join(dir, 'journal'));
  const recovered = await recover({ genesis: DEFAULT_VENUE, journal, snapshots: undefined, log: SILENT_LOG });
  const sequencer = new Sequencer(recovered.engine, journal, undefined, {
    clock,
    maxInFlight: 10_000,
    snapshotEveryCommands: 0,
    snapshotEveryMs: 0,
    keepSnapshots: 2,
    pruneJournal: false,
    log: SILENT_LOG,
    startTime: recovered.lastTime,
  });
  const engine = recovered.engine;
  const submit = (c: Command) => sequencer.submit(c);
  const replays = new Replays({ engine, submit, now: clock, log: SILENT_LOG });
  return { engine, sequencer, submit, replays };
}

test('replayed trades fill resting bids only at or through their price, in queue order; recovery gives the same state', async () => {
  const dir = join(root, 'venue');
  let now = T0 + 5 * 3_600_000;
  const venue = await openVenue(dir, () => now);
  const { engine, submit, replays } = venue;
  const must = async (c: Command) => {
    const r = await submit(c);
    assert.equal(r.result, 'OK', `${c.type}: ${r.message ?? ''}`);
    return r;
  };
  const alice = (await must({ type: 'RegisterUser', name: 'alice', uniqueIgnoringCase: true }))
    .userId as number;
  await must(creditCommand(engine, alice, 'usdt', '100000', 'alice-usdt'));
  await must(creditCommand(engine, alice, 'btc', '1', 'alice-btc'));

  try {
    const replay = await replays.start([file]);
    assert.equal(replay.sources[0]?.market, 'btc_usdt', 'the market told by the file name');
    const player = replays.player(replay.replayId);
    assert.ok(player !== undefined);
    await untilTrue('the first trade', () => player.progress.played === 1);
    await untilTrue(
      'the ladder',
      () => engine.openOrders(engine.userId('replay-maker-btc_usdt') as number).length >= 16,
    );
    assert.equal(engine.lastPrice('btc_usdt'), 3_000_000, 'the first trade printed at 30000');

    // Alice rests X (0.003) then Y (0.002) at 29990, Z at 29985, W at 29970, and an ask at 30010.
    const place = async (side: 0 | 1, price: number, amount: number) =>
      (
        await must({
          type: 'PlaceOrder',
          userId: alice,
          market: 'btc_usdt',
          side,
          kind: 'limit',
          price,
          amount,
          acctType: 0,
          clientOrderId: '',
        })
      ).orderId as number;
    const x = await place(BUY, 2_999_000, 30);
    const y = await place(BUY, 2_999_000, 20);
    const z = await place(BUY, 2_998_500, 10);
    const w = await place(BUY, 2_997_000, 10);
    const ask = await place(SELL, 3_001_000, 10);
    const filled = (id: number) => engine.openOrder(id)?.filled ?? 'done';

    const playTo = async (n: number) => {
      now += 10_000;
      await untilTrue(`trade ${n}`, () => player.progress.played >= n);

      await new Promise((resolve) => setTimeout(resolve, 50));
    };
    // A sell of 0.002 at 29990: X, first in the queue, takes it all; Y waits behind it.
    await playTo(2);
    assert.equal(filled(x), 20);
    assert.equal(filled(y), 0);
    assert.equal(filled(z), 0);
    // 0.003 more at 29990: X's last 0.001, then Y's 0.002: X is done before Y fills.
    await playTo(3);
    assert.equal(filled(x), 'done');
    assert.equal(filled(y), 'done');
    assert.equal(filled(z), 0, 'not traded at 29985 yet');
    // A sell at 29980 goes through 29985: Z fills whole; W at 29970 and the ask at 30010 never do.
    await playTo(4);
    assert.equal(filled(z), 'done');
    await playTo(5);
    assert.equal(filled(w), 0);
    assert.equal(filled(ask), 0);
    await untilTrue('the end', () => player.progress.finished);
    await player.start();
    assert.equal(engine.lastPrice('btc_usdt'), 2_998_500, 'the last replayed trade is the last price');
    const depth = engine.depth('btc_usdt', 50);
    assert.ok(
      depth !== undefined && depth.bids.length >= 8 && depth.asks.length >= 8,
      'the ladder quotes both sides',
    );
    assert.ok((depth.bids[0]?.[0] as number) < 2_998_500 && (depth.asks[0]?.[0] as number) > 2_998_500);
    assert.equal(player.refusals, 0);

    // The journal alone: the same state, and the replay shows it got to its end.
    await replays.stop();
    const hash = engine.stateHash();
    await venue.sequencer.close();
    const again = await openVenue(dir, () => now);
    assert.equal(again.engine.stateHash(), hash);
    assert.equal(again.engine.demo.replays()[0]?.sources[0]?.sha256.length, 64);
    await again.sequencer.close();
  } finally {
    await replays.stop();
    await venue.sequencer.close().catch(() => undefined);
  }
});
