import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SignedApiHarness, type Credentials } from '../../../../test/fixtures/signed-venue.ts';

type Json = Record<string, unknown>;

/** A demo venue: `bot` is a demo user, `alice` is not; both have keys with every permission. */
async function demoVenue(): Promise<{ h: SignedApiHarness; bot: Credentials; alice: Credentials }> {
  const h = new SignedApiHarness();
  const botId = await h.venue.user('demo-bot');
  const aliceId = await h.venue.user('alice');
  await h.venue.must({
    type: 'StartDemo',
    faucet: [
      { coin: 'usdt', perHour: 10_000_000_000 },
      { coin: 'btc', perHour: 100_000_000 },
    ],
  });
  await h.venue.must({ type: 'MarkDemoUser', userId: botId });
  return { h, bot: await h.key(botId), alice: await h.key(aliceId) };
}

describe('the faucet endpoint', () => {
  test('a demo user credits themself test money; it shows as a deposit', async () => {
    const { h, bot } = await demoVenue();
    const r = (await h.call('faucet', bot, { currency: 'USDT', amount: '2500.5' })) as Json;
    assert.equal(r.code, 1000);
    assert.match(String(r.id), /^faucet:\d+$/);
    const info = (await h.call('getAccountInfo', bot)) as { result: { coins: Json[] } };
    assert.equal(info.result.coins.find((c) => c.key === 'usdt')?.available, '2500.500000');
    const records = (await h.call('getChargeRecord', bot, { currency: 'usdt' })) as {
      message: { datas: { list: Json[] } };
    };
    assert.equal(records.message.datas.list.length, 1);
  });

  test('bad input is refused with its code and changes nothing', async () => {
    const { h, bot, alice } = await demoVenue();
    await h.call('faucet', bot, { currency: 'usdt', amount: '9000' });
    const state = (): string => JSON.stringify({ ...h.venue.engine.snapshot(), lastSeq: 0 });
    const before = state();
    const cases: [Credentials, Record<string, string>, number, RegExp][] = [
      [alice, { currency: 'usdt', amount: '1' }, 1012, /demo users only/],
      [bot, { currency: 'usdt', amount: '1000.000001' }, 1001, /10000 usdt per hour; 1000 left until/],
      [bot, { currency: 'doge', amount: '1' }, 3005, /unknown coin/],
      [bot, { currency: 'eth', amount: '1' }, 3005, /gives no eth/],
      [bot, { currency: 'usdt', amount: '0' }, 3003, /positive decimal/],
      [bot, { currency: 'usdt', amount: '-1' }, 3003, /positive decimal/],
      [bot, { currency: 'usdt', amount: '1e-9' }, 3003, /positive decimal/],
      [bot, { currency: 'usdt', amount: '0.0000001' }, 3003, /at most 6 decimals/],
      [bot, { currency: 'usdt' }, 3005, /amount is required/],
      [bot, { amount: '1' }, 3005, /currency is required/],
    ];
    for (const [who, params, code, message] of cases) {
      const r = (await h.call('faucet', who, params)) as Json;
      assert.equal(r.code, code, JSON.stringify(params));
      assert.match(String(r.message), message, JSON.stringify(params));
    }
    assert.equal(state(), before);
  });

  test('the faucet needs moneyPerm', async () => {
    const { h } = await demoVenue();
    const botId = h.venue.engine.userId('demo-bot') as number;
    const tradeOnly = await h.key(botId, { asset: true, entrust: true, money: false, lever: false });
    const r = (await h.call('faucet', tradeOnly, { currency: 'usdt', amount: '1' })) as Json;
    assert.equal(r.code, 1012);
  });
});
