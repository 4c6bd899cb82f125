import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_VENUE } from '../../config/default-venue.ts';
import type { Command } from '../../domain/commands.ts';
import { Engine } from '../../engine/engine.ts';
import type { HistoryStore } from '../../store/history-store.ts';
import type { ApiReply, ApiRequest, Route, VenuePort } from '../http/types.ts';
import { lendingAdminRoutes } from './lending-routes.ts';
import { answering } from './admin-reply.ts';

function setUp(): {
  engine: Engine;
  submitted: Command[];
  call: (form: [string, string][]) => Promise<Record<string, unknown>>;
} {
  const engine = new Engine(DEFAULT_VENUE);
  const submitted: Command[] = [];
  let seq = 0;
  const venue: VenuePort = {
    engine,
    history: undefined as unknown as HistoryStore,
    now: () => 1_700_000_000_000,
    submit: (command: Command) => {
      submitted.push(command);
      return Promise.resolve(engine.apply({ ...command, seq: ++seq, time: 1_700_000_000_000 + seq }));
    },
  };
  const [route] = lendingAdminRoutes({ venue }) as [Route];
  const call = async (form: [string, string][]): Promise<Record<string, unknown>> => {
    const request: ApiRequest = {
      method: 'POST',
      path: route.path,
      params: form.map(([name, value]) => ({ name, value, raw: `${name}=${value}` })),
      ip: '127.0.0.1',
      headers: {},
      receivedAt: 0,
    };
    const reply: ApiReply = await answering(route.handler)(request);
    return 'json' in reply ? (reply.json as Record<string, unknown>) : {};
  };
  return { engine, submitted, call };
}

const good: [string, string][] = [
  ['coin', 'USDT'],
  ['amount', '100000'],
  ['rate', '0.05'],
  ['days', '10'],
  ['ref', 'f1'],
];
const withParam = (name: string, value: string): [string, string][] =>
  good.map(([n, v]) => [n, n === name ? value : v]);

describe('/admin/lending/fund', () => {
  test('journals FundLendingPool with units, ppm and days; the reference makes a retry safe', async () => {
    const { engine, submitted, call } = setUp();
    const body = await call(good);
    assert.deepEqual(body, {
      code: 1000,
      message: 'success',
      fundingId: 'operator:f1',
      duplicate: false,
      coin: 'usdt',
      amount: '100000',
      rate: '0.05',
      days: 10,
    });
    // The pool offers it at once: the default lender of a fresh venue.
    const [offer] = engine.margin.openOffers('usdt');
    assert.equal(offer?.remaining, 100_000_000_000);
    assert.equal(offer?.dailyRatePpm, 500);
    assert.equal(offer?.days, 10);
    assert.equal((await call(good)).duplicate, true);
    assert.equal(engine.margin.openOffers('usdt')[0]?.remaining, 100_000_000_000);
    submitted.pop();
    assert.deepEqual(submitted, [
      {
        type: 'FundLendingPool',
        fundingId: 'operator:f1',
        coin: 'usdt',
        amount: 100_000_000_000,
        dailyRatePpm: 500,
        days: 10,
      },
    ]);
  });

  test('bad input: the interface codes, nothing journaled', async () => {
    const { submitted, call } = setUp();
    const cases: [[string, string][], number, RegExp][] = [
      [withParam('coin', 'doge'), 3005, /unknown coin 'doge'/],
      [withParam('coin', 'bchabc'), 3005, /retired/],
      [withParam('amount', '0'), 3003, /amount '0' must be a positive decimal with at most 6 decimals/],
      [withParam('amount', '1.0000001'), 3003, /amount/],
      [withParam('amount', '99999999999999999999'), 3003, /amount/],
      [withParam('rate', '5%'), 3005, /rate '5%' must be a percent per day/],
      [withParam('rate', '0.3'), 3005, /rate 0.3 % is outside 0.05..0.2 % per day/],
      [withParam('rate', '0.04'), 3005, /outside/],
      [withParam('days', '15'), 3005, /days '15' must be one of 10, 20, 30/],
      [withParam('days', ''), 3005, /days/],
      [withParam('ref', 'x'.repeat(65)), 3005, /ref must be 1 to 64 characters/],
    ];
    for (const [form, code, message] of cases) {
      const body = await call(form);
      assert.equal(body.code, code, JSON.stringify(body));
      assert.match(String(body.message), message);
    }
    assert.deepEqual(submitted, []);
  });
});
