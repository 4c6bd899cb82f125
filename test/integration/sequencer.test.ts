import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import { BUY, SELL } from '../../src/domain/commands.ts';
import type { VenueConfig } from '../../src/domain/specs.ts';
import { FileJournal } from '../../src/journal/file-journal.ts';
import { SnapshotStore } from '../../src/journal/snapshot-store.ts';
import { recover } from '../../src/sequencer/recovery.ts';
import { Sequencer, type AppliedCommand, type SequencerOptions } from '../../src/sequencer/sequencer.ts';
import { memoryLog, SILENT_LOG } from '../../src/observability/memory-log.ts';
import { FeedPositionError, type VenueState } from '../../src/sequencer/venue-ports.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'bourse-seq-'));
  dirs.push(d);
  return d;
};

const options = (overrides: Partial<SequencerOptions> = {}): SequencerOptions => ({
  clock: Date.now,
  maxInFlight: 10_000,
  snapshotEveryCommands: 0,
  snapshotEveryMs: 0,
  keepSnapshots: 2,
  pruneJournal: false,
  log: SILENT_LOG,
  ...overrides,
});

async function open(
  dir: string,
  genesis: VenueConfig = DEFAULT_VENUE,
  overrides: Partial<SequencerOptions> = {},
) {
  const journal = FileJournal.open(join(dir, 'journal'));
  const snapshots = new SnapshotStore(join(dir, 'snapshots'));
  const { engine } = await recover({ genesis, journal, snapshots, log: SILENT_LOG });
  return { sequencer: new Sequencer(engine, journal, snapshots, options(overrides)), journal, snapshots };
}

describe('sequencer', () => {
  test('acknowledges after durability, in sequence, and subscribers see every applied command', async () => {
    const { sequencer, journal } = await open(tempDir());
    const seen: AppliedCommand[] = [];
    sequencer.subscribe(sequencer.appliedSeq + 1, (batch) => seen.push(...batch));
    sequencer.subscribe(sequencer.appliedSeq + 1, () => {
      throw new Error('a broken subscriber must not matter');
    });
    const results = await Promise.all([
      sequencer.submit({ type: 'RegisterUser', name: 'alice' }),
      sequencer.submit({ type: 'RegisterUser', name: 'bob' }),
      sequencer.submit({ type: 'RegisterUser', name: 'alice' }),
    ]);
    assert.deepEqual(
      results.map((r) => r.result),
      ['OK', 'OK', 'INVALID_PARAMETER'],
    );
    assert.equal(journal.durableSeq, 3);
    assert.deepEqual(
      seen.map((c) => c.command.seq),
      [1, 2, 3],
    );
    assert.ok(
      seen.every((c, i) => i === 0 || c.command.time >= (seen[i - 1] as AppliedCommand).command.time),
    );
    await sequencer.close();
  });

  test('the applied feed is joined at the next command: never with a gap, never twice (issue 18)', async () => {
    const { sequencer } = await open(tempDir());
    await sequencer.submit({ type: 'RegisterUser', name: 'alice' });
    assert.equal(sequencer.appliedSeq, 1);
    assert.throws(() => sequencer.subscribe(1, () => undefined), FeedPositionError);
    assert.throws(() => sequencer.subscribe(3, () => undefined), /cannot feed applied commands from seq 3/);
    const seen: number[] = [];
    sequencer.subscribe(2, (batch) => seen.push(...batch.map((a) => a.command.seq)));
    await sequencer.submit({ type: 'RegisterUser', name: 'bob' });
    assert.deepEqual(seen, [2]);
    // Readers get the state without the means to change it.
    const state: VenueState = sequencer.engine;
    // @ts-expect-error: VenueState has no apply; commands go through a SubmitPort.
    assert.equal(state.apply, sequencer.engine.apply);
    await sequencer.close();
  });

  test('refuses with BUSY, journaling nothing, when too many commands are in flight', async () => {
    const { sequencer, journal } = await open(tempDir(), DEFAULT_VENUE, { maxInFlight: 2 });
    const pending = [1, 2, 3, 4].map((i) => sequencer.submit({ type: 'RegisterUser', name: `u${i}` }));
    const results = await Promise.all(pending);
    assert.deepEqual(
      results.map((r) => r.result),
      ['OK', 'OK', 'BUSY', 'BUSY'],
    );
    assert.equal(journal.durableSeq, 2);
    await sequencer.close();
  });

  test('an applied command is let go at once: its result is collectable once its caller drops it (bench:soak)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const { sequencer } = await open(tempDir());
    const refs: WeakRef<object>[] = [];
    for (let i = 0; i < 3; i++)
      refs.push(new WeakRef(await sequencer.submit({ type: 'RegisterUser', name: `u${i}` })));
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    // Before, the sequencer's queue kept up to 4,096 applied entries, each holding its settled
    // promise and so its result and events, until it compacted.
    assert.deepEqual(
      refs.map((r) => r.deref()),
      [undefined, undefined, undefined],
    );
    assert.equal(sequencer.inFlight, 0);
    await sequencer.close();
  });

  test('the dead-man switch fires through a journaled FireTimers command', async () => {
    const genesis = { ...DEFAULT_VENUE, settings: { ...DEFAULT_VENUE.settings, cancelAllAfterMs: 400 } };
    const dir = tempDir();
    const { sequencer } = await open(dir, genesis);
    const alice = (await sequencer.submit({ type: 'RegisterUser', name: 'alice' })).userId as number;
    await sequencer.submit({
      type: 'CreditDeposit',
      depositId: 'd',
      userId: alice,
      coin: 'usdt',
      amount: 10 ** 10,
      remark: '',
    });
    const order = {
      type: 'PlaceOrder',
      userId: alice,
      market: 'btc_usdt',
      kind: 'limit',
      acctType: 0,
      clientOrderId: '',
    } as const;
    await sequencer.submit({ ...order, side: BUY, price: 1_000_000, amount: 100 });
    const fired = new Promise<void>((resolve) =>
      sequencer.subscribe(sequencer.appliedSeq + 1, (batch) => {
        if (batch.some((c) => c.command.type === 'FireTimers')) resolve();
      }),
    );
    const armed = await sequencer.submit({ type: 'CancelAllOrdersAfter', userId: alice, market: 'btc_usdt' });
    if (Date.now() < (armed.deadline as number)) assert.equal(sequencer.engine.openOrders(alice).length, 1);
    await fired;
    assert.equal(sequencer.engine.openOrders(alice).length, 0);
    await sequencer.close();

    // A replay of the journal reproduces the cancellation exactly.
    const again = await open(dir, genesis);
    assert.equal(again.sequencer.engine.openOrders(alice).length, 0);
    assert.equal(again.sequencer.engine.stateHash(), sequencer.engine.stateHash());
    await again.sequencer.close();
  });

  test('restart from snapshot + journal gives the state that was', async () => {
    const dir = tempDir();
    const { sequencer } = await open(dir);
    const a = (await sequencer.submit({ type: 'RegisterUser', name: 'a' })).userId as number;
    const b = (await sequencer.submit({ type: 'RegisterUser', name: 'b' })).userId as number;
    await sequencer.submit({
      type: 'CreditDeposit',
      depositId: '1',
      userId: a,
      coin: 'usdt',
      amount: 10 ** 11,
      remark: '',
    });
    await sequencer.submit({
      type: 'CreditDeposit',
      depositId: '2',
      userId: b,
      coin: 'btc',
      amount: 10 ** 9,
      remark: '',
    });
    const place = {
      type: 'PlaceOrder',
      market: 'btc_usdt',
      kind: 'limit',
      acctType: 0,
      clientOrderId: '',
    } as const;
    for (let i = 0; i < 50; i++) {
      await sequencer.submit({ ...place, userId: b, side: SELL, price: 3_000_000 + i * 100, amount: 10 });
    }
    assert.ok((await sequencer.snapshot())?.includes('snapshot-'));
    const batch = [];
    for (let i = 0; i < 30; i++)
      batch.push(sequencer.submit({ ...place, userId: a, side: BUY, price: 3_002_000, amount: 7 }));
    await Promise.all(batch);
    const hash = sequencer.engine.stateHash();
    await sequencer.close();

    const logs = memoryLog();
    const journal = FileJournal.open(join(dir, 'journal'));
    const snapshots = new SnapshotStore(join(dir, 'snapshots'));
    const recovered = await recover({ genesis: DEFAULT_VENUE, journal, snapshots, log: logs.log });
    assert.equal(recovered.snapshotSeq, 54);
    assert.equal(recovered.replayed, 30);
    assert.equal(recovered.engine.stateHash(), hash);
    recovered.engine.assertInvariants();
    const restored = logs.entries().find((e) => e['msg'] === 'restored the snapshot at seq 54');
    assert.equal(restored?.['seq'], 54);
    assert.equal(restored?.['level'], 'info');
    await journal.close();
  });

  test('reuseEvents: the events of a batch read as applied through its subscribers and awaits, reused after the turn (issue 34)', async () => {
    const { sequencer } = await open(tempDir(), DEFAULT_VENUE, { reuseEvents: true });
    const alice = (await sequencer.submit({ type: 'RegisterUser', name: 'alice' })).userId as number;
    await sequencer.submit({
      type: 'CreditDeposit',
      depositId: 'd',
      userId: alice,
      coin: 'usdt',
      amount: 10 ** 10,
      remark: '',
    });
    const order = {
      type: 'PlaceOrder',
      userId: alice,
      market: 'btc_usdt',
      kind: 'limit',
      side: BUY,
      amount: 100,
      acctType: 0,
      clientOrderId: '',
    } as const;
    // What a subscriber sees, copied at once; the results as the awaits get them.
    const copied: string[] = [];
    sequencer.subscribe(sequencer.appliedSeq + 1, (batch) => {
      for (const c of batch) copied.push(JSON.stringify(c.result.events));
    });
    const results = await Promise.all([
      sequencer.submit({ ...order, price: 1_000_000 }),
      sequencer.submit({ ...order, price: 1_000_001 }),
    ]);
    const read = results.map((r) => JSON.stringify(r.events));
    assert.deepEqual(read, copied);
    assert.match(read[0] as string, /"price":1000000,/);
    assert.match(read[1] as string, /"price":1000001,/);
    const first = results[0]?.events[0];
    await new Promise((resolve) => setImmediate(resolve));
    const next = await sequencer.submit({ ...order, price: 1_000_002 });
    assert.equal(next.events[0], first, 'after the turn, the first event object is reused');
    assert.match(JSON.stringify(next.events), /"price":1000002,/);
    assert.equal(sequencer.engine.openOrders(alice).length, 3);
    await sequencer.close();
  });
});
