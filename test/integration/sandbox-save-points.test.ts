/**
 * A sandbox's save points through the admin routes over a real journal, sequencer and recovery
 * (issue 35): a restore gives back exactly the saved state, keeps the saved users' API keys, keeps
 * ids counting, is journaled so a restart comes back to it; a reset leaves a fresh demo venue; bad
 * input and a venue that is not a sandbox change nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { savePointRoutes } from '../../src/api/admin/save-point-routes.ts';
import { answering } from '../../src/api/admin/admin-reply.ts';
import type { ApiRequest, Route, VenuePort } from '../../src/api/http/types.ts';
import { DEFAULT_VENUE } from '../../src/config/default-venue.ts';
import { BUY, SELL, type Command } from '../../src/domain/commands.ts';
import { FileJournal } from '../../src/journal/file-journal.ts';
import { SILENT_LOG } from '../../src/observability/memory-log.ts';
import { savePointHash, SavePoints } from '../../src/sandbox/save-points.ts';
import { ManualClock } from '../../src/sequencer/manual-clock.ts';
import { recover } from '../../src/sequencer/recovery.ts';
import { Sequencer } from '../../src/sequencer/sequencer.ts';
import type { HistoryStore } from '../../src/store/history-store.ts';
import { creditCommand } from '../fixtures/engine-driver.ts';
import { fileTimeLimit } from '../fixtures/time-limit.ts';

fileTimeLimit(import.meta.url);

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const START = 1_700_000_000_000;

/** The venue on `dir`: recovered from its journal, its save-point routes (a sandbox unless told). */
async function openVenue(dir: string, sandbox = true) {
  const journal = FileJournal.open(join(dir, 'journal'));
  const recovered = await recover({ genesis: DEFAULT_VENUE, journal, snapshots: undefined, log: SILENT_LOG });
  const clock = new ManualClock(recovered.lastTime ?? START);
  const sequencer = new Sequencer(recovered.engine, journal, undefined, {
    ...{ clock: clock.now, maxInFlight: 10_000, snapshotEveryCommands: 0, snapshotEveryMs: 0 },
    ...{
      keepSnapshots: 2,
      pruneJournal: false,
      log: SILENT_LOG,
      startTime: recovered.lastTime,
      armTimers: false,
    },
  });
  const engine = recovered.engine;
  const venue: VenuePort = {
    engine,
    history: undefined as unknown as HistoryStore,
    now: clock.now,
    submit: (command: Command) => sequencer.submit(command),
  };
  const routes = new Map<string, Route>(
    savePointRoutes({
      venue,
      saves: sandbox ? { points: new SavePoints(dir), genesis: DEFAULT_VENUE } : undefined,
    }).map((r) => [r.path, r]),
  );
  const call = async (path: string, params: Record<string, string> = {}) => {
    const route = routes.get(path) as Route;
    const request: ApiRequest = {
      ...{ method: 'POST', path, ip: '127.0.0.1', headers: {}, receivedAt: 0 },
      params: Object.entries(params).map(([name, value]) => ({ name, value, raw: `${name}=${value}` })),
    };
    const reply = await answering(route.handler)(request);
    return (reply as { json: Record<string, unknown> }).json;
  };
  const must = async (cmd: Command) => {
    const r = await sequencer.submit(cmd);
    assert.equal(r.result, 'OK', `${cmd.type}: ${r.message ?? ''}`);
    return r;
  };
  return { engine, sequencer, journal, clock, call, must, close: () => sequencer.close() };
}

const order = (userId: number, side: 0 | 1, price: number, amount = 100): Command => ({
  ...{ type: 'PlaceOrder', userId, market: 'btc_usdt', side, kind: 'limit', price, amount },
  ...{ acctType: 0, clientOrderId: '' },
});

const KEY = {
  accessKey: 'alice-key-0001',
  sealedSecret: 'sealed-alice',
  permissions: { asset: true, entrust: true, money: false, lever: false },
  ips: [],
};

describe('sandbox save points', () => {
  test('restore gives back the saved state hash, the saved keys work, ids keep counting, a restart comes back to the restored state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bourse-save-'));
    dirs.push(dir);
    const v = await openVenue(dir);
    await v.must({ type: 'RegisterUser', name: 'alice', uniqueIgnoringCase: true });
    await v.must({ type: 'RegisterUser', name: 'bob', uniqueIgnoringCase: true });
    await v.must(creditCommand(v.engine, 1, 'usdt', '100000', 'a'));
    await v.must(creditCommand(v.engine, 2, 'btc', '10', 'b'));
    await v.must({ type: 'CreateApiKey', userId: 1, ...KEY });
    await v.must(order(1, BUY, 3_000_000));
    await v.must(order(2, SELL, 3_000_000, 40)); // a trade; alice's bid rests with 60 lots left

    const saved = await v.call('/admin/sandbox/save', { name: 'before-run' });
    assert.equal(saved.code, 1000, String(saved.message));
    assert.equal(saved.stateHash, savePointHash(v.engine.snapshot()));
    assert.ok(existsSync(join(dir, 'sandbox', 'before-run.json')));
    const savedState = v.engine.snapshot();
    const ordersBefore = savedState.nextOrderId;

    // The run after the save: more trades, a key deleted, a new user.
    await v.must(order(2, SELL, 3_000_000, 60));
    await v.must({ type: 'DeleteApiKey', accessKey: KEY.accessKey });
    await v.must({ type: 'RegisterUser', name: 'carol', uniqueIgnoringCase: true });
    assert.notEqual(savePointHash(v.engine.snapshot()), saved.stateHash);
    const ordersAfterRun = v.engine.snapshot().nextOrderId;

    const restored = await v.call('/admin/sandbox/restore', { name: 'before-run' });
    assert.equal(restored.code, 1000, String(restored.message));
    assert.equal(restored.stateHash, saved.stateHash, 'the exact state hash that was saved');
    assert.equal(savePointHash(v.engine.snapshot()), saved.stateHash);
    v.engine.assertInvariants();
    assert.equal(v.engine.apiKey(KEY.accessKey)?.userId, 1, "the saved user's key works again");
    assert.equal(v.engine.userId('carol'), undefined);
    assert.equal(v.engine.openOrders(1)[0]?.filled, 40, "alice's bid rests again, 40 of its 100 lots filled");
    // Everything but the journal position and the id counters is the saved state, byte for byte.
    const now = v.engine.snapshot();
    assert.equal(now.nextOrderId, ordersAfterRun, 'order ids keep counting (never given twice)');
    assert.ok(now.nextOrderId > ordersBefore);
    assert.deepEqual(
      { ...now, lastSeq: 0, nextOrderId: 0, nextTradeId: 0, nextUserId: 0 },
      {
        ...savedState,
        ...{ lastSeq: 0, nextOrderId: 0, nextTradeId: 0, nextUserId: 0 },
      },
    );
    const next = await v.must(order(1, BUY, 2_900_000));
    assert.equal(next.orderId, ordersAfterRun, 'the next order takes a new id');

    // A restart replays the journal, the restore included, to the same state.
    const full = v.engine.stateHash();
    await v.close();
    rmSync(join(dir, 'sandbox'), { recursive: true }); // the save file is not needed to recover
    const again = await openVenue(dir);
    assert.equal(again.engine.stateHash(), full);
    assert.equal(again.engine.apiKey(KEY.accessKey)?.userId, 1);
    await again.close();
  });

  test('bad names, unknown names, a damaged file and a venue that is not a sandbox are refused with nothing changed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bourse-save-bad-'));
    dirs.push(dir);
    const v = await openVenue(dir);
    await v.must({ type: 'RegisterUser', name: 'alice', uniqueIgnoringCase: true });
    const hash = v.engine.stateHash();
    const seq = v.journal.durableSeq;
    for (const [path, name, says] of [
      ['/admin/sandbox/save', '../etc', 'is not a save point name'],
      ['/admin/sandbox/save', '', 'is not a save point name'],
      ['/admin/sandbox/save', 'a b', 'is not a save point name'],
      ['/admin/sandbox/save', 'x'.repeat(65), 'is not a save point name'],
      ['/admin/sandbox/restore', 'nothing-saved', "no save point 'nothing-saved': none saved yet"],
      ['/admin/sandbox/restore', '.hidden', 'is not a save point name'],
    ] as const) {
      const r = await v.call(path, { name });
      assert.equal(r.code, 3005, `${path} ${name}`);
      assert.match(String(r.message), new RegExp(says.replace(/[.()']/g, '.')), String(r.message));
    }
    assert.equal((await v.call('/admin/sandbox/save', { name: 'one' })).code, 1000);
    const unknown = await v.call('/admin/sandbox/restore', { name: 'two' });
    assert.match(String(unknown.message), /no save point 'two': the saved ones are one/);
    writeFileSync(join(dir, 'sandbox', 'broken.json'), '{"name":"broken","stateHash":"00","state":{}}');
    const damaged = await v.call('/admin/sandbox/restore', { name: 'broken' });
    assert.equal(damaged.code, 3005);
    assert.match(String(damaged.message), /is damaged/);
    assert.equal(v.engine.stateHash(), hash);
    assert.equal(v.journal.durableSeq, seq, 'nothing journaled');
    await v.close();

    const plain = await openVenue(dir, false);
    for (const path of [
      '/admin/sandbox/save',
      '/admin/sandbox/restore',
      '/admin/sandbox/reset',
      '/admin/sandbox/saves',
    ]) {
      const r = await plain.call(path, { name: 'one' });
      assert.equal(r.code, 3005, path);
      assert.match(String(r.message), /only a sandbox .*--sandbox/);
    }
    assert.equal(plain.engine.stateHash(), hash);
    await plain.close();
  });

  test('reset leaves a fresh demo venue: the demo users with their demo funds and keys, nothing else; ids keep counting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bourse-reset-'));
    dirs.push(dir);
    const v = await openVenue(dir);
    await v.must({ type: 'StartDemo', faucet: [{ coin: 'usdt', perHour: 1_000_000_000 }] });
    const trader = (await v.must({ type: 'RegisterUser', name: 'demo-trader', uniqueIgnoringCase: true }))
      .userId as number;
    await v.must({ type: 'MarkDemoUser', userId: trader });
    await v.must(creditCommand(v.engine, trader, 'usdt', '50000', 'demo:demo-trader:usdt'));
    await v.must({ type: 'CreateApiKey', userId: trader, ...KEY });
    const alice = (await v.must({ type: 'RegisterUser', name: 'alice', uniqueIgnoringCase: true }))
      .userId as number;
    await v.must(creditCommand(v.engine, alice, 'btc', '1', 'alice-btc'));
    await v.must(order(trader, BUY, 3_000_000));
    await v.must(order(alice, SELL, 3_000_000, 30));
    await v.must({ type: 'DemoFaucet', userId: trader, coin: 'usdt', amount: 100_000_000 });
    const before = v.engine.snapshot();

    const r = await v.call('/admin/sandbox/reset');
    assert.equal(r.code, 1000, String(r.message));
    v.engine.assertInvariants();
    assert.equal(v.engine.userId('alice'), undefined, 'only demo users');
    const id = v.engine.userId('demo-trader') as number;
    assert.ok(id >= before.nextUserId, 'a new user id, never given before');
    assert.equal(v.engine.apiKey(KEY.accessKey)?.userId, id, "the demo user's key works");
    assert.deepEqual(v.engine.balance(id, 'usdt'), { available: 50_000 * 10 ** 6, frozen: 0 });
    assert.deepEqual(v.engine.balance(id, 'btc'), { available: 0, frozen: 0 });
    assert.equal(v.engine.openOrders(id).length, 0);
    assert.equal(v.engine.lastPrice('btc_usdt'), 0);
    assert.ok(v.engine.demo.started && v.engine.demo.isDemoUser(id));
    assert.equal(v.engine.snapshot().nextOrderId, before.nextOrderId);
    const full = v.engine.stateHash();
    await v.close();
    const again = await openVenue(dir);
    assert.equal(again.engine.stateHash(), full, 'a restart comes back to the reset venue');
    await again.close();
  });

  test('the engine refuses a RestoreSandbox whose state does not load, changing nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bourse-restore-bad-'));
    dirs.push(dir);
    const v = await openVenue(dir);
    await v.must({ type: 'RegisterUser', name: 'alice', uniqueIgnoringCase: true });
    const before = { ...v.engine.snapshot(), lastSeq: 0 };
    const broken = { ...v.engine.snapshot(), users: [[1, 'alice', false, [-5], [0]]] };
    for (const state of [{}, { version: 99 }, broken]) {
      const r = await v.sequencer.submit({ type: 'RestoreSandbox', name: 'x', state });
      assert.equal(r.result, 'INVALID_PARAMETER');
      assert.match(String(r.message), /the state to restore does not load/);
    }
    // Only the journal position moved (three refused commands).
    assert.deepEqual({ ...v.engine.snapshot(), lastSeq: 0 }, before);
    await v.close();
  });
});
