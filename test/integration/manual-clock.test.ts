import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { LiveKlines } from '../../src/api/market-data/live-klines.ts';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import { BUY, SELL, type Command } from '../../src/domain/commands.ts';
import { FileJournal } from '../../src/journal/file-journal.ts';
import { MAX_CLOCK_ADVANCE_MS, ManualClock } from '../../src/sequencer/manual-clock.ts';
import { recover } from '../../src/sequencer/recovery.ts';
import { Sequencer } from '../../src/sequencer/sequencer.ts';
import { creditCommand } from '../fixtures/engine-driver.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** 2023-11-14 22:13:20 UTC: 20 s into a minute. */
const START = 1_700_000_000_000;
const MINUTE = 60_000;

/** The venue on `dir`, on `clock` (default: a manual clock where the journal ends, or at START). */
async function openVenue(dir: string, clock?: { readonly now: () => number }) {
  const journal = FileJournal.open(join(dir, 'journal'));
  const recovered = await recover({ genesis: DEFAULT_VENUE, journal, snapshots: undefined, log: SILENT_LOG });
  const manual = (clock ?? new ManualClock(recovered.lastTime ?? START)) as ManualClock;
  const sequencer = new Sequencer(recovered.engine, journal, undefined, {
    clock: manual.now,
    maxInFlight: 10_000,
    snapshotEveryCommands: 0,
    snapshotEveryMs: 0,
    keepSnapshots: 2,
    pruneJournal: false,
    log: SILENT_LOG,
    armTimers: false,
    startTime: recovered.lastTime,
  });
  const klines = new LiveKlines();
  sequencer.subscribe(sequencer.appliedSeq + 1, klines.apply);
  const must = async (cmd: Command): Promise<void> => {
    const r = await sequencer.submit(cmd);
    assert.equal(r.result, 'OK', `${cmd.type}: ${r.message ?? ''}`);
  };
  return { sequencer, engine: recovered.engine, clock: manual, klines, must, lastTime: recovered.lastTime };
}

const order = (userId: number, side: 0 | 1, price: number): Command => ({
  type: 'PlaceOrder',
  userId,
  market: 'btc_usdt',
  side,
  kind: 'limit',
  price, // ticks: 0.01 usdt
  amount: 100, // lots: 0.01 btc
  acctType: 0,
  clientOrderId: '',
});

describe('the manual clock', () => {
  test('advancing fires the dead-man switch at its deadline and rolls the candle; replay gives the same state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bourse-clock-'));
    dirs.push(dir);
    const v = await openVenue(dir);
    await v.must({ type: 'RegisterUser', name: 'alice' });
    await v.must({ type: 'RegisterUser', name: 'bob' });
    await v.must(creditCommand(v.engine, 1, 'usdt', '100000', 'a'));
    await v.must(creditCommand(v.engine, 2, 'btc', '10', 'b'));
    await v.must(order(1, BUY, 3_000_000)); // alice bids 30000
    await v.must(order(2, SELL, 3_000_000)); // bob sells into it: the first trade, at START
    await v.must(order(1, BUY, 2_900_000)); // alice's resting bid
    const armed = await v.sequencer.submit({ type: 'CancelAllOrdersAfter', userId: 1, market: 'btc_usdt' });
    assert.equal(armed.deadline, START + MINUTE);

    // Real time passes; venue time does not, and no real-time timer fires the switch.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(v.clock.now(), START);
    assert.equal(v.engine.openOrders(1).length, 1);

    const fired: { time: number; type: string }[] = [];
    v.sequencer.subscribe(v.sequencer.appliedSeq + 1, (batch) => {
      for (const a of batch)
        for (const e of a.result.events)
          if (e.type === 'DeadmanFired') fired.push({ time: e.time, type: e.type });
    });
    const advance = await v.clock.advance(2 * MINUTE, {
      nextDeadline: () => v.engine.nextDeadline(),
      submit: (cmd) => v.sequencer.submit(cmd),
    });
    assert.deepEqual(advance, { from: START, to: START + 2 * MINUTE, timerSteps: 1 });
    assert.deepEqual(fired, [{ time: START + MINUTE, type: 'DeadmanFired' }], 'fired at the deadline');
    assert.equal(v.engine.openOrders(1).length, 0);

    await v.must(order(1, BUY, 3_010_000));
    await v.must(order(2, SELL, 3_010_000)); // a trade two minutes later
    const candles = v.klines.latest('btc_usdt', '1min');
    assert.deepEqual(
      candles.map((c) => [c[0], c[4]]),
      [
        [START - (START % MINUTE), 3_000_000],
        [START - (START % MINUTE) + 2 * MINUTE, 3_010_000],
      ],
      'the second trade opened a new 1-minute candle',
    );
    const hash = v.engine.stateHash();
    await v.sequencer.close();

    const replayed = await openVenue(dir);
    assert.equal(replayed.engine.stateHash(), hash, 'replay reproduces the state hash');
    assert.equal(replayed.lastTime, START + 2 * MINUTE, 'the clock resumes where it was advanced to');
    assert.equal(replayed.clock.now(), START + 2 * MINUTE);
    await replayed.sequencer.close();
  });

  test('a venue that ran ahead of the wall clock never stamps an earlier time after a restart on the real clock', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bourse-clock-'));
    dirs.push(dir);
    const ahead = Date.now() + 86_400_000;
    const v = await openVenue(dir, new ManualClock(ahead));
    await v.must({ type: 'RegisterUser', name: 'alice' });
    await v.sequencer.close();
    const real = await openVenue(dir, { now: Date.now });
    const times: number[] = [];
    real.sequencer.subscribe(real.sequencer.appliedSeq + 1, (batch) =>
      times.push(...batch.map((a) => a.command.time)),
    );
    await real.must({ type: 'RegisterUser', name: 'bob' });
    assert.deepEqual(times, [ahead]);
    await real.sequencer.close();
  });

  test('an advance out of range moves nothing', async () => {
    const clock = new ManualClock(START);
    const venue = { nextDeadline: () => undefined, submit: () => Promise.reject(new Error('not called')) };
    for (const ms of [0, -1, 1.5, Number.NaN, MAX_CLOCK_ADVANCE_MS + 1]) {
      await assert.rejects(clock.advance(ms, venue), RangeError);
    }
    assert.equal(clock.now(), START);
  });
});
