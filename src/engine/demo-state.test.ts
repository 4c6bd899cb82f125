import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EngineDriver, T0 } from '../../test/fixtures/engine-driver.ts';
import type { Command } from '../domain/commands.ts';
import { RESULTS } from '../domain/result-codes.ts';
import { FAUCET_WINDOW_MS } from './demo-state.ts';
import { Engine } from './engine.ts';

/** 1,000 usdt (6 decimals) and 0.5 btc (8 decimals) per hour. */
const FAUCET = [
  { coin: 'usdt', perHour: 1_000_000_000 },
  { coin: 'btc', perHour: 50_000_000 },
];

function demoVenue(): { d: EngineDriver; bot: number; alice: number } {
  const d = new EngineDriver();
  const bot = d.user('demo-bot');
  const alice = d.user('alice');
  assert.equal(d.apply({ type: 'StartDemo', faucet: FAUCET }).result, 'OK');
  assert.equal(d.apply({ type: 'MarkDemoUser', userId: bot }).result, 'OK');
  return { d, bot, alice };
}

const faucet = (userId: number, coin: string, amount: number): Command => ({
  type: 'DemoFaucet',
  userId,
  coin,
  amount,
});

describe('the demo market in the engine', () => {
  test('StartDemo, MarkDemoUser and StopDemo record facts and events; repeats are harmless', () => {
    const d = new EngineDriver();
    const bot = d.user('demo-bot');
    assert.equal(d.apply({ type: 'MarkDemoUser', userId: bot }).result, 'INVALID_STATE');
    assert.equal(d.apply({ type: 'StopDemo' }).result, 'INVALID_STATE');
    const started = d.apply({ type: 'StartDemo', faucet: FAUCET });
    assert.deepEqual(
      started.events.map((e) => e.type),
      ['DemoStarted'],
    );
    assert.equal(d.apply({ type: 'StartDemo', faucet: FAUCET }).result, 'INVALID_STATE');
    assert.deepEqual(
      d.apply({ type: 'MarkDemoUser', userId: bot }).events.map((e) => e.type),
      ['DemoUserMarked'],
    );
    assert.equal(d.apply({ type: 'MarkDemoUser', userId: bot }).duplicate, true);
    assert.equal(d.apply({ type: 'MarkDemoUser', userId: 999 }).result, 'USER_NOT_FOUND');
    const demo = d.engine.demo;
    assert.equal(demo.started, true);
    assert.equal(demo.stopped, false);
    assert.deepEqual(demo.demoUsers(), [bot]);
    assert.equal(d.apply({ type: 'StopDemo' }).events[0]?.type, 'DemoStopped');
    assert.equal(d.apply({ type: 'StopDemo' }).duplicate, true);
    assert.equal(demo.stopped, true);
    assert.equal(demo.isDemoUser(bot), true, 'users stay demo users after the stop');
    d.engine.assertInvariants();
  });

  test('StartDemo refuses a bad faucet and changes nothing', () => {
    const d = new EngineDriver();
    const state = (): string => JSON.stringify({ ...d.engine.snapshot(), lastSeq: 0 });
    const before = state();
    const bad: Command[] = [
      { type: 'StartDemo', faucet: [{ coin: 'doge', perHour: 1 }] },
      { type: 'StartDemo', faucet: [{ coin: 'usdt', perHour: 0 }] },
      { type: 'StartDemo', faucet: [{ coin: 'usdt', perHour: 1.5 }] },
      {
        type: 'StartDemo',
        faucet: [
          { coin: 'usdt', perHour: 1 },
          { coin: 'usdt', perHour: 2 },
        ],
      },
      { type: 'StartDemo', faucet: 'usdt' as never },
    ];
    for (const cmd of bad) assert.notEqual(d.apply(cmd).result, 'OK', JSON.stringify(cmd));
    assert.equal(d.engine.demo.started, false);
    assert.equal(state(), before);
  });

  test('the faucet credits a demo user as a deposit, within the hourly allowance', () => {
    const { d, bot } = demoVenue();
    const r = d.apply(faucet(bot, 'usdt', 600_000_000));
    assert.equal(r.result, 'OK');
    assert.deepEqual(
      r.events.map((e) => e.type),
      ['BalanceChanged', 'DepositUpdated'],
    );
    const deposit = r.events[1];
    assert.ok(deposit?.type === 'DepositUpdated');
    assert.equal(deposit.note, 'demo faucet');
    assert.match(deposit.depositId, /^faucet:\d+$/);
    assert.equal(d.engine.balance(bot, 'usdt')?.available, 600_000_000);

    const over = d.apply(faucet(bot, 'usdt', 400_000_001));
    assert.equal(over.result, 'FAUCET_LIMIT');
    assert.equal(RESULTS.FAUCET_LIMIT.code, 1001);
    assert.match(over.message ?? '', /1000 usdt per hour; 400 left until/);
    assert.equal(d.apply(faucet(bot, 'usdt', 400_000_000)).result, 'OK', 'exactly the rest is allowed');
    assert.equal(d.apply(faucet(bot, 'usdt', 1)).result, 'FAUCET_LIMIT');
    assert.equal(d.engine.demo.faucetUsed(bot, 'usdt', d.time), 1_000_000_000);
    assert.equal(d.apply(faucet(bot, 'btc', 50_000_000)).result, 'OK', 'each coin has its own allowance');

    // The next UTC hour starts afresh.
    d.time = T0 - (T0 % FAUCET_WINDOW_MS) + FAUCET_WINDOW_MS;
    assert.equal(d.apply(faucet(bot, 'usdt', 1_000_000_000)).result, 'OK');
    assert.equal(d.engine.balance(bot, 'usdt')?.available, 2_000_000_000);
    d.engine.assertInvariants();
  });

  test('bad faucet requests are refused and change nothing', () => {
    const { d, bot, alice } = demoVenue();
    const before = JSON.stringify({ ...d.engine.snapshot(), lastSeq: 0 });
    const cases: [Command, string][] = [
      [faucet(alice, 'usdt', 1), 'PERMISSION_DENIED'],
      [faucet(999, 'usdt', 1), 'USER_NOT_FOUND'],
      [faucet(bot, 'doge', 1), 'UNKNOWN_COIN'],
      [faucet(bot, 'eth', 1), 'INVALID_PARAMETER'],
      [faucet(bot, 'usdt', 0), 'INVALID_AMOUNT'],
      [faucet(bot, 'usdt', -5), 'INVALID_AMOUNT'],
      [faucet(bot, 'usdt', 0.5), 'INVALID_AMOUNT'],
      [faucet(bot, 'usdt', 2 ** 60), 'INVALID_AMOUNT'],
      [faucet(bot, 'usdt', 1_000_000_001), 'FAUCET_LIMIT'],
    ];
    for (const [cmd, result] of cases) {
      const r = d.apply(cmd);
      assert.equal(r.result, result, JSON.stringify(cmd));
      assert.deepEqual(r.events, []);
    }
    assert.equal(JSON.stringify({ ...d.engine.snapshot(), lastSeq: 0 }), before);
  });

  test('the demo state survives a snapshot; a venue without the demo keeps its snapshot and hash', () => {
    const plain = new EngineDriver();
    plain.user('alice');
    assert.equal('demo' in JSON.parse(JSON.stringify(plain.engine.snapshot())), false);

    const { d, bot } = demoVenue();
    d.apply(faucet(bot, 'usdt', 5_000_000));
    d.apply({ type: 'StopDemo' });
    const restored = Engine.restore(d.engine.snapshot());
    assert.equal(restored.stateHash(), d.engine.stateHash());
    assert.equal(restored.demo.stopped, true);
    assert.equal(restored.demo.isDemoUser(bot), true);
    assert.equal(restored.demo.faucetUsed(bot, 'usdt', d.time), 5_000_000);
    assert.deepEqual(restored.demo.faucet(), FAUCET);
  });
});
