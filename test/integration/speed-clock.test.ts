import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { LiveKlines } from '../../src/api/market-data/live-klines.ts';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import { BUY, SELL, type Command } from '../../src/domain/commands.ts';
import { FileJournal } from '../../src/journal/file-journal.ts';
import { recover } from '../../src/sequencer/recovery.ts';
import { Sequencer } from '../../src/sequencer/sequencer.ts';
import { SpeedClock } from '../../src/sequencer/speed-clock.ts';
import { creditCommand } from '../fixtures/engine-driver.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** 2023-11-14 22:13:20 UTC: 20 s into a minute. */
const START = 1_700_000_000_000;
const MINUTE = 60_000;

/** The venue on `dir` on a speed clock, with the sequencer's real-time timers armed as main.ts arms them. */
async function openVenue(dir: string, speed: number) {
  const journal = FileJournal.open(join(dir, 'journal'));
  const recovered = await recover({ genesis: DEFAULT_VENUE, journal, snapshots: undefined, log: SILENT_LOG });
  const clock = new SpeedClock(recovered.lastTime ?? START, speed);
  const sequencer = new Sequencer(recovered.engine, journal, undefined, {
    clock: clock.now,
    timerDelay: clock.wallDelay,
    maxInFlight: 10_000,
    snapshotEveryCommands: 0,
    snapshotEveryMs: 0,
    keepSnapshots: 2,
    pruneJournal: false,
    log: SILENT_LOG,
    startTime: recovered.lastTime,
  });
  const klines = new LiveKlines();
  sequencer.subscribe(sequencer.appliedSeq + 1, klines.apply);
  const fired: { time: number; seq: number; command: string }[] = [];
  sequencer.subscribe(sequencer.appliedSeq + 1, (batch) => {
    for (const a of batch)
      for (const e of a.result.events)
        if (e.type === 'DeadmanFired')
          fired.push({ time: e.time, seq: a.command.seq, command: a.command.type });
  });
  const must = async (cmd: Command): Promise<void> => {
    const r = await sequencer.submit(cmd);
    assert.equal(r.result, 'OK', `${cmd.type}: ${r.message ?? ''}`);
  };
  const changeSpeed = (n: number) =>
    clock.setSpeed(n, { submit: (cmd) => sequencer.submit(cmd), rearmTimers: () => sequencer.rearmTimers() });
  return {
    sequencer,
    engine: recovered.engine,
    clock,
    klines,
    fired,
    must,
    changeSpeed,
    lastTime: recovered.lastTime,
  };
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

/** Waits (on the file's time limit, not a timed assertion) until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 2));
}

type Venue = Awaited<ReturnType<typeof openVenue>>;

async function twoUsersAndATrade(v: Venue): Promise<void> {
  await v.must({ type: 'RegisterUser', name: 'alice' });
  await v.must({ type: 'RegisterUser', name: 'bob' });
  await v.must(creditCommand(v.engine, 1, 'usdt', '100000', 'a'));
  await v.must(creditCommand(v.engine, 2, 'btc', '10', 'b'));
  await v.must(order(1, BUY, 3_000_000)); // alice bids 30000
  await v.must(order(2, SELL, 3_000_000)); // bob sells into it: the first trade
}

describe('the speed clock', () => {
  test('at 1000 times, a 60 s dead-man switch fires on its own at venue time past its deadline; candles roll at venue minutes; replay gives the same state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bourse-speed-'));
    dirs.push(dir);
    const v = await openVenue(dir, 1000);
    await twoUsersAndATrade(v);
    const firstTrade = v.klines.latest('btc_usdt', '1min')[0]?.[0] as number;
    await v.must(order(1, BUY, 2_900_000)); // alice's resting bid
    const armed = await v.sequencer.submit({ type: 'CancelAllOrdersAfter', userId: 1, market: 'btc_usdt' });
    const deadline = armed.deadline as number;
    assert.ok(deadline >= START + MINUTE, 'a minute of venue time from when it was set');

    // Nobody advances anything: the sequencer's timer, armed at a thousandth of the delay, fires it.
    await until(() => v.fired.length > 0);
    assert.equal(v.fired.length, 1);
    const fired = v.fired[0] as { time: number; seq: number; command: string };
    assert.equal(fired.command, 'FireTimers');
    assert.ok(fired.time >= deadline, `fired at ${fired.time}, not before its deadline ${deadline}`);
    assert.equal(v.engine.openOrders(1).length, 0, 'the resting bid was cancelled');

    // A trade after the venue passed the next minute boundary lands in its own 1-minute candle.
    const nextMinute = firstTrade + MINUTE;
    await until(() => v.clock.now() >= nextMinute + 1_000);
    await v.must(order(1, BUY, 3_010_000));
    await v.must(order(2, SELL, 3_010_000));
    const candles = v.klines.latest('btc_usdt', '1min');
    assert.equal(candles.length, 2);
    assert.equal((candles[0] as readonly number[])[0], firstTrade);
    assert.equal((candles[0] as readonly number[])[4], 3_000_000);
    const second = candles[1] as readonly number[];
    assert.equal((second[0] as number) % MINUTE, 0, 'candles open at venue-minute boundaries');
    assert.ok((second[0] as number) >= nextMinute);
    assert.equal(second[4], 3_010_000);

    const hash = v.engine.stateHash();
    const lastTime = v.clock.now();
    await v.sequencer.close();
    const replayed = await openVenue(dir, 1);
    assert.equal(replayed.engine.stateHash(), hash, 'replay reproduces the state hash');
    assert.ok((replayed.lastTime as number) <= lastTime && (replayed.lastTime as number) >= fired.time);
    assert.ok(replayed.clock.now() >= (replayed.lastTime as number), 'a restart never goes back in time');
    await replayed.sequencer.close();
  });

  test('changing the speed journals the time of the change and re-arms a pending timer at the new speed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bourse-speed-'));
    dirs.push(dir);
    const v = await openVenue(dir, 1); // real time: the switch would take a wall minute
    await twoUsersAndATrade(v);
    await v.must(order(1, BUY, 2_900_000));
    const armed = await v.sequencer.submit({ type: 'CancelAllOrdersAfter', userId: 1, market: 'btc_usdt' });
    const deadline = armed.deadline as number;
    const seqBefore = v.engine.lastSeq;
    const change = await v.changeSpeed(10_000);
    assert.deepEqual([change.from, change.to], [1, 10_000]);
    assert.ok(change.time < deadline);
    assert.equal(v.engine.lastSeq, seqBefore + 1, 'one FireTimers, stamped at the change, is journaled');
    assert.equal(v.clock.speed, 10_000);

    await until(() => v.fired.length > 0);
    assert.ok((v.fired[0] as { time: number }).time >= deadline);
    assert.equal(v.engine.openOrders(1).length, 0);
    const hash = v.engine.stateHash();
    await v.sequencer.close();
    const replayed = await openVenue(dir, 1);
    assert.equal(replayed.engine.stateHash(), hash);
    await replayed.sequencer.close();
  });

  test('a speed out of range changes nothing', async () => {
    const clock = new SpeedClock(START, 10, () => 0);
    const venue = { submit: () => Promise.reject(new Error('not called')), rearmTimers: () => undefined };
    for (const n of [0, -1, Number.NaN, 1_000_001, Infinity]) {
      await assert.rejects(clock.setSpeed(n, venue), RangeError);
    }
    assert.equal(clock.speed, 10);
    assert.throws(() => new SpeedClock(START, 0), RangeError);
  });
});
