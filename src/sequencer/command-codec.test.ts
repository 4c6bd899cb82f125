import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BUY, SELL, type SequencedCommand } from '../domain/commands.ts';
import { decodeCommand, encodeCommand } from './command-codec.ts';

const place = (over: Partial<Record<string, unknown>> = {}): SequencedCommand =>
  ({
    type: 'PlaceOrder',
    userId: 7,
    market: 'btc_usdt',
    side: BUY,
    kind: 'limit',
    price: 3_000_000,
    amount: 15,
    acctType: 0,
    clientOrderId: '',
    seq: 42,
    time: 1_763_769_600_123,
    ...over,
  }) as SequencedCommand;

const cancel = (over: Partial<Record<string, unknown>> = {}): SequencedCommand =>
  ({
    type: 'CancelOrder',
    userId: 7,
    market: 'btc_usdt',
    orderId: 981,
    clientOrderId: '',
    seq: 43,
    time: 1_763_769_600_124,
    ...over,
  }) as SequencedCommand;

const roundTrip = (cmd: SequencedCommand): SequencedCommand => decodeCommand(cmd.seq, encodeCommand(cmd));
const isJson = (cmd: SequencedCommand): boolean => encodeCommand(cmd)[0] === 0x7b;

describe('command codec', () => {
  test('places and cancels take the binary form and come back exactly', () => {
    const cases = [
      place(),
      place({ side: SELL, kind: 'postOnly', acctType: 2, clientOrderId: 'abcd1234' }),
      place({ kind: 'ioc', price: Number.MAX_SAFE_INTEGER, amount: 2 ** 40, userId: 2 ** 33 }),
      place({ price: 0.5, amount: -3 }), // refused by the engine, but replayed as it came
      place({ acctType: 1, express: true }),
      place({ acctType: 2, express: false }),
      cancel(),
      cancel({ orderId: 0, clientOrderId: 'Z9'.repeat(18) }),
    ];
    for (const cmd of cases) {
      assert.equal(isJson(cmd), false, JSON.stringify(cmd));
      assert.deepEqual(roundTrip(cmd), cmd);
      assert.ok(encodeCommand(cmd).length < JSON.stringify(cmd).length);
    }
  });

  test('anything outside the binary form stays JSON and comes back exactly', () => {
    const cases = [
      place({ kind: 'market' }),
      place({ side: 2 }),
      place({ market: 'bt€_usdt' }),
      place({ clientOrderId: 'x'.repeat(300) }),
      place({ price: '3000' }),
      place({ extra: true }),
      place({ express: 'yes' }),
      place({ express: true, extra: 1 }),
      cancel({ orderId: 'seven' }),
      { type: 'RegisterUser', name: 'zoë', seq: 1, time: 5 } as SequencedCommand,
      { type: 'FireTimers', seq: 2, time: 6 } as SequencedCommand,
      {
        type: 'Borrow',
        userId: 3,
        acctType: 1,
        market: 'btc_usdt',
        coin: 'usdt',
        amount: 5_000_000,
        maxDailyRatePpm: 1000,
        days: 10,
        rollOver: false,
        seq: 3,
        time: 7,
      } as SequencedCommand,
      { type: 'RepayLoan', userId: 3, loanId: 1, amount: 'all', seq: 4, time: 8 } as SequencedCommand,
    ];
    for (const cmd of cases) {
      assert.equal(isJson(cmd), true, JSON.stringify(cmd));
      assert.deepEqual(roundTrip(cmd), cmd);
    }
  });

  test('a record for another seq, a truncated or an unknown payload is refused', () => {
    const bytes = encodeCommand(place());
    assert.throws(() => decodeCommand(41, bytes), /journal record 41 does not hold command 41/);
    for (const cut of [1, 20, bytes.length - 1]) {
      assert.throws(() => decodeCommand(42, bytes.subarray(0, cut)), /does not hold command 42/);
    }
    assert.throws(() => decodeCommand(42, Uint8Array.of(0x09, 1, 2)), /does not hold command 42/);
    assert.throws(() => decodeCommand(42, new Uint8Array(0)), /does not hold command 42/);
    const padded = new Uint8Array(bytes.length + 1);
    padded.set(bytes);
    assert.throws(() => decodeCommand(42, padded), /does not hold command 42/);
  });

  test('a payload inside a larger buffer decodes (journal reads hand out views)', () => {
    const bytes = encodeCommand(cancel());
    const big = new Uint8Array(bytes.length + 13);
    big.set(bytes, 13);
    assert.deepEqual(decodeCommand(43, big.subarray(13)), cancel());
  });
});
