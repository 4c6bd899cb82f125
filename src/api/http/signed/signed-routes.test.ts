import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RESULTS } from '../../../domain/result-codes.ts';
import { hmacMd5Hex, secretHash } from '../../auth/signature.ts';
import { SIGNED_ENDPOINTS } from './index.ts';
import { SignedApiHarness, T0, type Credentials } from '../../../../test/fixtures/signed-venue.ts';

type Json = Record<string, unknown>;

async function place(
  h: SignedApiHarness,
  creds: Credentials,
  params: Record<string, string>,
): Promise<string> {
  const body = (await h.call('order', creds, { currency: 'btc_usdt', ...params })) as Json;
  assert.equal(body.code, 1000, JSON.stringify(body));
  return body.id as string;
}

/** Calls with bad input and checks the code, the message, and that nothing changed. */
async function refused(
  h: SignedApiHarness,
  creds: Credentials,
  method: string,
  params: Record<string, string>,
  code: number,
  message: RegExp,
  journaled = false,
): Promise<void> {
  const before = h.stateText();
  const submitted = h.venue.submitted;
  const body = (await h.call(method, creds, params)) as Json;
  assert.equal(body.code, code, `${method} ${JSON.stringify(params)} → ${JSON.stringify(body)}`);
  assert.match(String(body.message), message, `${method} ${JSON.stringify(params)}`);
  assert.equal(h.stateText(), before, 'state changed');
  if (!journaled) assert.equal(h.venue.submitted, submitted, 'a command was submitted');
}

/** alice has usdt and zb, bob has btc; both have a key with every permission. */
async function market(): Promise<{
  h: SignedApiHarness;
  alice: Credentials;
  bob: Credentials;
  aliceId: number;
  bobId: number;
}> {
  const h = new SignedApiHarness();
  const aliceId = await h.venue.fund('alice', 'usdt', '100000');
  await h.venue.fund('alice', 'zb', '1000');
  const bobId = await h.venue.fund('bob', 'btc', '10');
  return { h, alice: await h.key(aliceId), bob: await h.key(bobId), aliceId, bobId };
}

describe('signed routes', () => {
  describe('order', () => {
    test('places a limit order: {code:1000, message:"success", id:"<string>"}', async () => {
      const { h, alice, aliceId } = await market();
      const body = await h.call('order', alice, {
        currency: 'btc_usdt',
        tradeType: '1',
        price: '30000.00',
        amount: '0.0100',
      });
      assert.deepEqual(body, { code: 1000, message: 'success', id: '1' });
      const [open] = h.venue.engine.openOrders(aliceId);
      assert.equal(open?.price, 3_000_000);
      assert.equal(open?.amount, 100);
      assert.equal(h.venue.engine.balance(aliceId, 'usdt')?.frozen, 300_000_000);
    });

    test('orderType 1 PostOnly, 2 IOC, absent or empty limit; unknown extras ignored but signed', async () => {
      const { h, alice, bob } = await market();
      await place(h, bob, { tradeType: '0', price: '30000', amount: '1' });
      const po = await h.call('order', alice, {
        currency: 'btc_usdt',
        tradeType: '1',
        price: '30000',
        amount: '0.1',
        orderType: '1',
      });
      assert.equal((po as Json).code, RESULTS.POST_ONLY_WOULD_TAKE.code);
      const ioc = await place(h, alice, { tradeType: '1', price: '29000', amount: '0.1', orderType: '2' });
      const iocOrder = (await h.call('getOrder', alice, { currency: 'btc_usdt', id: ioc })) as Json;
      assert.equal(iocOrder.type, 5);
      assert.equal(iocOrder.status, 1);
      const limit = await place(h, alice, {
        tradeType: '1',
        price: '29000',
        amount: '0.1',
        orderType: '',
        timeInForce: 'GTC',
        postOnly: 'false',
        enableExpress: 'false',
      });
      assert.equal(((await h.call('getOrder', alice, { currency: 'btc_usdt', id: limit })) as Json).type, 1);
      const post = await place(h, alice, { tradeType: '1', price: '28000', amount: '0.1', orderType: '1' });
      assert.equal(((await h.call('getOrder', alice, { currency: 'btc_usdt', id: post })) as Json).type, 3);
    });

    test('bad input: 3005 (or the specific code) naming the parameter; nothing changes', async () => {
      const { h, alice } = await market();
      await h.venue.fund('carol', 'zb', '1');
      const good = { currency: 'btc_usdt', tradeType: '1', price: '30000', amount: '0.01' };
      const cases: [Record<string, string>, number, RegExp][] = [
        [{ ...good, currency: '' }, 3005, /currency is required/],
        [{ ...good, currency: 'BTC_USDT' }, 3005, /currency 'BTC_USDT' must be lowercase/],
        [{ ...good, currency: 'btcusdt' }, 3005, /currency 'btcusdt' must be <base>_<quote>/],
        [{ ...good, currency: 'bchabc_usdt' }, 3005, /coin name 'bchabc' is retired; use 'bch'/],
        [{ ...good, currency: 'usdt_bchsv' }, 3005, /retired; use 'bsv'/],
        [{ ...good, currency: 'bch_usdt' }, 3005, /unknown market 'bch_usdt'/],
        [{ ...good, currency: 'x'.repeat(5000) }, 3005, /currency 'x{40}…' must be/],
        [{ ...good, tradeType: '2' }, 3005, /tradeType '2' must be one of 1, 0/],
        [{ ...good, tradeType: '' }, 3005, /tradeType is required/],
        [{ ...good, price: '' }, 3005, /price is required/],
        [{ ...good, amount: '' }, 3005, /amount is required/],
        [{ ...good, price: 'abc' }, 3002, /price 'abc' must be a positive decimal/],
        [{ ...good, price: '-1' }, 3002, /price/],
        [{ ...good, price: '30000.001' }, 3002, /at most 2 decimals/],
        [{ ...good, price: '0' }, 3002, /price/],
        [{ ...good, price: '3e-3' }, 3002, /price '3e-3' must be a positive decimal with at most 2 decimals/],
        [{ ...good, price: '-3e4' }, 3002, /price/],
        [{ ...good, price: '0e5' }, 3002, /price/],
        [{ ...good, price: '3e' }, 3002, /price/],
        [{ ...good, price: '3e4.5' }, 3002, /price/],
        [{ ...good, price: '3e99999' }, 3002, /price/],
        [{ ...good, amount: '1e-5' }, 3003, /amount '1e-5'/],
        [{ ...good, price: ' 30000' }, 3002, /price/],
        [{ ...good, amount: '0.00001' }, 3003, /amount '0.00001'/],
        [{ ...good, amount: '99999999999999999999' }, 3003, /amount/],
        [{ ...good, amount: 'NaN' }, 3003, /amount/],
        [{ ...good, acctType: '9' }, 3005, /acctType '9' must be one of 0, 1, 2/],
        [{ ...good, enableExpress: '2' }, 3005, /enableExpress '2' must be 1 or 0/],
        [{ ...good, enableExpress: 'true' }, 3005, /enableExpress applies to margin orders only/],
        [{ ...good, customerOrderId: 'ab' }, 3005, /customerOrderId 'ab' must be 4 to 36 letters or digits/],
        [{ ...good, customerOrderId: 'abc-def' }, 3005, /customerOrderId/],
        [{ ...good, customerOrderId: '你好你好' }, 3005, /customerOrderId/],
        // orderType is absent, empty, 1 or 2: a near miss never becomes a limit order that takes.
        ...[' 1', '1 ', '01', '3', '0', 'IOC', '2.0', '+2', '１'].map(
          (orderType): [Record<string, string>, number, RegExp] => [
            { ...good, orderType },
            3005,
            /orderType '.*' must be one of 1, 2/,
          ],
        ),
      ];
      for (const [params, code, message] of cases) await refused(h, alice, 'order', params, code, message);
      // Refusals that depend on state are the engine's: journaled, but nothing changes.
      const engineCases: [Record<string, string>, number, RegExp][] = [
        [{ ...good, amount: '100' }, 2009, /insufficient/],
        [{ ...good, price: '1', amount: '0.0001' }, 3002, /minimum total of 5 usdt/],
        [{ ...good, price: '30000', amount: '0.00001000' }, 3003, /amount/],
      ];
      for (const [params, code, message] of engineCases)
        await refused(h, alice, 'order', params, code, message, true);
      assert.equal(h.logged.length, 0);
    });

    test("exponent notation (ZB's Python SDK formats prices with %s) is read exactly", async () => {
      const { h, bob, bobId } = await market();
      // eth_btc: priceScale 6, amountScale 2. 5e-05 btc per eth is 50 ticks, exactly.
      const id = await place(h, bob, {
        currency: 'eth_btc',
        tradeType: '1',
        price: '5e-05',
        amount: '1.5E+1',
      });
      const [open] = h.venue.engine.openOrders(bobId);
      assert.equal(String(open?.id), id);
      assert.equal(open?.price, 50);
      assert.equal(open?.amount, 1500);
      // 15 eth × 0.00005 btc = 0.00075 btc frozen, in satoshis.
      assert.equal(h.venue.engine.balance(bobId, 'btc')?.frozen, 75_000);
      const batch = (await h.call('orderMoreV2', bob, {
        market: 'eth_btc',
        tradeType: '1',
        tradeParams: '[[4.5e-5,2e1],["4e-05","1e1"]]',
      })) as Json;
      assert.equal(batch.code, 1000, JSON.stringify(batch));
      assert.deepEqual(
        h.venue.engine.openOrders(bobId).map((o) => [o.price, o.amount]),
        [
          [50, 1500],
          [45, 2000],
          [40, 1000],
        ],
      );
      const good = { currency: 'eth_btc', tradeType: '1', price: '5e-05', amount: '10' };
      await refused(h, bob, 'order', { ...good, price: '5e-07' }, 3002, /at most 6 decimals/);
      await refused(h, bob, 'order', { ...good, price: '-5e-05' }, 3002, /price/);
      await refused(h, bob, 'order', { ...good, price: '0e-05' }, 3002, /price/);
      await refused(h, bob, 'order', { ...good, amount: '1e-3' }, 3003, /at most 2 decimals/);
      await refused(h, bob, 'order', { ...good, amount: '1e20' }, 3003, /amount/);
    });

    test('a halted market refuses with 1009', async () => {
      const { h, alice } = await market();
      await h.venue.must({ type: 'SetMarketStatus', market: 'btc_usdt', status: 'halted' });
      const body = (await h.call('order', alice, {
        currency: 'btc_usdt',
        tradeType: '1',
        price: '1',
        amount: '1',
      })) as Json;
      assert.equal(body.code, 1009);
    });
  });

  describe('orderMoreV2', () => {
    test('places every pair, ids as numbers in order; quoted decimals and spaces accepted', async () => {
      const { h, alice, aliceId } = await market();
      const body = (await h.call('orderMoreV2', alice, {
        market: 'btc_usdt',
        tradeType: '1',
        tradeParams: '[[30000,0.01], [ "29999.5" , "0.0200" ],[29000.00,0.1]]',
      })) as Json;
      assert.deepEqual(body, { code: 1000, message: 'success', data: [1, 2, 3] });
      const open = h.venue.engine.openOrders(aliceId);
      assert.deepEqual(
        open.map((o) => [o.price, o.amount]),
        [
          [3_000_000, 100],
          [2_999_950, 200],
          [2_900_000, 1000],
        ],
      );
    });

    test('any bad pair, or a batch the balance cannot cover, places nothing', async () => {
      const { h, alice } = await market();
      const pairs = (n: number): string => `[${Array.from({ length: n }, () => '[100,0.1]').join(',')}]`;
      const p = (tradeParams: string): Record<string, string> => ({
        market: 'btc_usdt',
        tradeType: '1',
        tradeParams,
      });
      const cases: [Record<string, string>, number, RegExp][] = [
        [p(''), 3005, /tradeParams is required/],
        [p('[]'), 3005, /tradeParams must be a JSON array of 1 to 20/],
        [p(pairs(21)), 3005, /more than 20 pairs/],
        [p('[[100,0.1],]'), 3005, /tradeParams must be/],
        [p('[[100,0.1]'), 3005, /tradeParams must be/],
        [p('[[100,0.1]]x'), 3005, /tradeParams must be/],
        [p('[[100]]'), 3005, /tradeParams must be/],
        [p('[[100,0.1,5]]'), 3005, /tradeParams must be/],
        [p('{"a":1}'), 3005, /tradeParams must be/],
        [p(`[[${'9'.repeat(5000)},1]]`), 3005, /tradeParams must be/],
        [p('[[100,0.1],[100.001,0.1]]'), 3002, /tradeParams pair 2: price '100.001'/],
        [p('[[100,0.1],[100,-1]]'), 3003, /tradeParams pair 2: amount '-1'/],
        [p('[[100,0.1],[1e-3,0.1]]'), 3002, /pair 2/],
        [{ ...p('[[100,0.1]]'), market: 'BTC_USDT' }, 3005, /market 'BTC_USDT' must be lowercase/],
        [{ ...p('[[100,0.1]]'), market: '' }, 3005, /market is required/],
        [{ ...p('[[100,0.1]]'), tradeType: 'buy' }, 3005, /tradeType/],
        [{ ...p('[[100,0.1]]'), acctType: '3' }, 3005, /acctType/],
        [{ ...p('[[100,0.1]]'), acctType: '0', enableExpress: '1' }, 3005, /enableExpress/],
      ];
      for (const [params, code, message] of cases)
        await refused(h, alice, 'orderMoreV2', params, code, message);
      // Valid each, but together beyond the 100000 usdt balance; and one below the minimum size.
      await refused(h, alice, 'orderMoreV2', p('[[30000,3],[30000,0.5]]'), 2009, /insufficient/, true);
      await refused(
        h,
        alice,
        'orderMoreV2',
        p('[[30000,0.01],[1,0.0001]]'),
        3002,
        /order 2 of the batch/,
        true,
      );
    });
  });

  describe('customerOrderId', () => {
    test('a repeated one is accepted; getOrder and cancelOrder by it act on the latest order, open or closed', async () => {
      const { h, alice, aliceId } = await market();
      const order = { currency: 'btc_usdt', tradeType: '1', price: '100', amount: '0.1' };
      const first = await place(h, alice, { ...order, customerOrderId: 'grid1' });
      const second = await place(h, alice, { ...order, price: '101', customerOrderId: 'grid1' });
      assert.notEqual(first, second);
      assert.equal(h.venue.engine.openOrders(aliceId).length, 2);
      const ref = { currency: 'btc_usdt', customerOrderId: 'grid1' };
      const latest = (await h.call('getOrder', alice, ref)) as Json;
      assert.equal(latest.id, second);
      assert.equal(latest.price, 101);
      const cancel = (await h.call('cancelOrder', alice, ref)) as Json;
      assert.equal(cancel.code, 1000);
      assert.equal(cancel.id, second);
      assert.deepEqual(
        h.venue.engine.openOrders(aliceId).map((o) => String(o.id)),
        [first],
      );
      // The latest is now cancelled: it is the one a query reads, and a cancel finds nothing open,
      // though an older order with the id still rests.
      const closed = (await h.call('getOrder', alice, ref)) as Json;
      assert.equal(closed.id, second);
      assert.equal(closed.status, 1);
      await refused(h, alice, 'cancelOrder', ref, 3001, /no open order with customerOrderId grid1/);
      // The older one is still reachable by its id.
      const byId = (await h.call('cancelOrder', alice, { currency: 'btc_usdt', id: first })) as Json;
      assert.equal(byId.code, 1000);
    });

    test('an order refused by the engine does not take its customerOrderId from the latest', async () => {
      const { h, alice } = await market();
      const order = {
        currency: 'btc_usdt',
        tradeType: '1',
        price: '100',
        amount: '0.1',
        customerOrderId: 'once1',
      };
      const id = await place(h, alice, order);
      assert.equal(((await h.call('order', alice, { ...order, amount: '1000' })) as Json).code, 2009);
      const latest = (await h.call('getOrder', alice, {
        currency: 'btc_usdt',
        customerOrderId: 'once1',
      })) as Json;
      assert.equal(latest.id, id);
    });

    describe('idempotent placement: keys with replay protection', () => {
      /** alice's strict key, and her params with a fresh nonce (every strict request needs one). */
      async function strict(): Promise<{
        h: SignedApiHarness;
        key: Credentials;
        aliceId: number;
        p: (params: Record<string, string>) => Record<string, string>;
      }> {
        const { h, aliceId } = await market();
        const key = await h.key(aliceId, undefined, [], { replayProtection: true });
        const p = (params: Record<string, string>): Record<string, string> => ({
          ...params,
          nonce: String(h.venue.time),
        });
        return { h, key, aliceId, p };
      }

      test('a repeated one is refused (3005) naming the order, whatever its state; nothing is placed', async () => {
        const { h, key, aliceId, p } = await strict();
        const order = { currency: 'btc_usdt', tradeType: '1', price: '100', amount: '0.1' };
        const id = await place(h, key, p({ ...order, customerOrderId: 'grid1' }));
        await refused(
          h,
          key,
          'order',
          p({ ...order, price: '101', customerOrderId: 'grid1' }),
          3005,
          new RegExp(
            `customerOrderId 'grid1' already names order ${id} in btc_usdt: this key has replay protection, so a repeated placement is refused`,
          ),
        );
        await h.call('cancelOrder', key, p({ currency: 'btc_usdt', customerOrderId: 'grid1' }));
        await refused(
          h,
          key,
          'order',
          p({ ...order, customerOrderId: 'grid1' }),
          3005,
          /already names order/,
        );
        // Another market, or another user, is another name space.
        await h.venue.fund('alice', 'usdt', '1');
        const eth = (await h.call(
          'order',
          key,
          p({ ...order, currency: 'eth_usdt', customerOrderId: 'grid1' }),
        )) as Json;
        assert.equal(eth.code, 1000);
        assert.equal(h.venue.engine.openOrders(aliceId).length, 1);
      });

      test('concurrent placements with one new customerOrderId place exactly one order', async () => {
        const { h, key, aliceId } = await strict();
        // As the sequencer does, apply only later (after the journal's fsync): every placement has
        // passed its checks before the first is applied.
        const submit = h.venue.submit.bind(h.venue);
        h.venue.submit = async (command) => {
          await new Promise((resolve) => setTimeout(resolve, 10));
          return submit(command);
        };
        const bodies = (await Promise.all(
          Array.from({ length: 5 }, (_, i) =>
            h.call('order', key, {
              currency: 'btc_usdt',
              tradeType: '1',
              price: '100',
              amount: '0.1',
              customerOrderId: 'retry42',
              nonce: String(h.venue.time + i),
            }),
          ),
        )) as Json[];
        assert.equal(bodies.filter((b) => b.code === 1000).length, 1);
        assert.equal(bodies.filter((b) => b.code === 3005).length, 4);
        assert.equal(h.venue.engine.openOrders(aliceId).length, 1);
      });

      test('an order refused by the engine does not take its customerOrderId', async () => {
        const { h, key, p } = await strict();
        const big = { currency: 'btc_usdt', tradeType: '1', price: '30000', amount: '1000' };
        assert.equal(
          ((await h.call('order', key, p({ ...big, customerOrderId: 'once1' }))) as Json).code,
          2009,
        );
        assert.equal(
          ((await h.call('order', key, p({ ...big, amount: '0.1', customerOrderId: 'once1' }))) as Json).code,
          1000,
        );
      });
    });
  });

  describe('the signature binds the endpoint', () => {
    test('a getOrder signature sent to cancelOrder is refused (3005), sorted or as sent; the order rests', async () => {
      const { h, alice, aliceId } = await market();
      const id = await place(h, alice, { tradeType: '1', price: '100', amount: '0.1' });
      const before = h.stateText();
      const asSent = hmacMd5Hex(
        secretHash(alice.secret),
        `method=getOrder&id=${id}&currency=btc_usdt&accesskey=${alice.accessKey}`,
      );
      for (const sign of ['decoded', asSent]) {
        const request = h.request(
          'getOrder',
          alice,
          { method: 'getOrder', id, currency: 'btc_usdt' },
          { sign },
        );
        // Either signature is good on getOrder itself.
        assert.equal(((await h.send(request)) as { json: Json }).json.id, id);
        const reply = await h.send({ ...request, path: '/api/cancelOrder' });
        const body = 'json' in reply ? (reply.json as Json) : {};
        assert.equal(body.code, 3005, JSON.stringify(body));
        assert.match(
          String(body.message),
          /method 'getOrder' does not match the path's method 'cancelOrder'/,
        );
      }
      assert.equal(h.stateText(), before);
      assert.equal(h.venue.engine.openOrders(aliceId).length, 1);
    });
  });

  describe('cancelOrder and getOrder through an order life', () => {
    test('open → partly filled → cancelled; records from engine and history', async () => {
      const { h, alice, bob } = await market();
      const id = await place(h, alice, {
        tradeType: '1',
        price: '30000',
        amount: '0.5',
        customerOrderId: 'myOrder1',
      });
      const open = (await h.call('getOrder', alice, { currency: 'btc_usdt', id })) as Json;
      assert.deepEqual(open, {
        acctType: 0,
        currency: 'btc_usdt',
        fees: '0',
        id,
        price: 30000,
        status: 0,
        total_amount: 0.5,
        trade_amount: 0,
        trade_date: open.trade_date,
        trade_money: 0,
        type: 1,
        useZbFee: false,
        webId: 0,
      });
      assert.ok(typeof open.trade_date === 'number' && open.trade_date > T0);

      await place(h, bob, { tradeType: '0', price: '29000', amount: '0.2' });
      const partial = (await h.call('getOrder', alice, {
        currency: 'btc_usdt',
        customerOrderId: 'myOrder1',
      })) as Json;
      assert.equal(partial.status, 3);
      assert.equal(partial.trade_amount, 0.2);
      assert.equal(partial.trade_money, 6000);
      assert.equal(partial.fees, '0.0004'); // 0.2% of 0.2 btc, in the coin received

      const cancelled = await h.call('cancelOrder', alice, { currency: 'btc_usdt', id });
      assert.deepEqual(cancelled, {
        code: 1000,
        message: {
          des: 'success',
          isSuc: true,
          datas: { amount: 0.5, price: 30000, completeMonty: 6000, completeAmount: 0.2 },
        },
        id,
      });
      const done = (await h.call('getOrder', alice, { currency: 'btc_usdt', id })) as Json;
      assert.equal(done.status, 2); // cancelled after a partial fill
      await refused(h, alice, 'cancelOrder', { currency: 'btc_usdt', id }, 3001, /order not found/);

      const never = await place(h, alice, {
        tradeType: '1',
        price: '100',
        amount: '0.1',
        customerOrderId: 'myOrder2',
      });
      const c2 = (await h.call('cancelOrder', alice, {
        currency: 'btc_usdt',
        customerOrderId: 'myOrder2',
      })) as Json;
      assert.equal(c2.code, 1000);
      assert.equal(c2.id, never);
      assert.equal(
        ((await h.call('getOrder', alice, { currency: 'btc_usdt', id: never })) as Json).status,
        1,
      );
      // The seller's filled order comes from history.
      const sold = (await h.call('getOrder', bob, { currency: 'btc_usdt', id: '2' })) as Json;
      assert.equal(sold.status, 2);
      assert.equal(sold.type, 0);
      assert.equal(sold.price, 29000);
      assert.equal(sold.fees, '12'); // 0.2% of 6000 usdt
    });

    test('fees paid with the platform coin show useZbFee', async () => {
      const { h, alice, bob, aliceId } = await market();
      await h.venue.fund('bob', 'usdt', '1000');
      await h.venue.must({ type: 'SetFeePreference', userId: aliceId, usePlatformCoin: true });
      // A zb price so that the fee can be converted.
      await place(h, bob, { currency: 'zb_usdt', tradeType: '1', price: '1', amount: '10' });
      await place(h, alice, { currency: 'zb_usdt', tradeType: '0', price: '1', amount: '10' });
      // The first btc trade sets the btc price that the next fee conversion needs.
      await place(h, bob, { tradeType: '0', price: '30000', amount: '0.2' });
      await place(h, alice, { tradeType: '1', price: '30000', amount: '0.1' });
      const id = await place(h, alice, { tradeType: '1', price: '30000', amount: '0.1' });
      const order = (await h.call('getOrder', alice, { currency: 'btc_usdt', id })) as Json;
      assert.equal(order.useZbFee, true);
      assert.equal(order.fees, '4.5'); // 0.0002 btc = 6 usdt = 6 zb, 25% off
    });

    test('bad references and other users’ orders', async () => {
      const { h, alice, bob } = await market();
      const id = await place(h, alice, { tradeType: '1', price: '100', amount: '0.1' });
      for (const method of ['cancelOrder', 'getOrder']) {
        await refused(h, bob, method, { currency: 'btc_usdt', id }, 3001, /order not found/);
        await refused(h, alice, method, { currency: 'eth_usdt', id }, 3001, /order not found/);
        await refused(
          h,
          alice,
          method,
          { currency: 'btc_usdt', id: '424242' },
          3001,
          /order not found: this account has no (open )?order with id 424242 in btc_usdt/,
        );
        await refused(
          h,
          alice,
          method,
          { currency: 'btc_usdt', customerOrderId: 'nosuch1' },
          3001,
          /order not found/,
        );
        await refused(h, alice, method, { currency: 'btc_usdt' }, 3005, /id or customerOrderId is required/);
        await refused(
          h,
          alice,
          method,
          { currency: 'btc_usdt', id, customerOrderId: 'abcd' },
          3005,
          /mutually exclusive/,
        );
        // An id in the real venue's form (up to 19 digits, beyond 2^53) names no order here:
        // 3001, as the venue answered (ccxt: OrderNotFound), never rounded to a nearby id.
        for (const long of ['9007199254740993', '202202224851151555', '9223372036854775807']) {
          await refused(h, alice, method, { currency: 'btc_usdt', id: long }, 3001, /order not found/);
        }
        for (const bad of ['0', '-1', '1.5', 'abc', '01', ' 1', '+1', '1e3', '12345678901234567890']) {
          await refused(
            h,
            alice,
            method,
            { currency: 'btc_usdt', id: bad },
            3005,
            /id '.*' must be an order id/,
          );
        }
        await refused(
          h,
          alice,
          method,
          { currency: 'btc_usdt', customerOrderId: 'a b' },
          3005,
          /customerOrderId/,
        );
        await refused(h, alice, method, { currency: 'hsr_usdt', id }, 3005, /use 'hc'/);
      }
    });
  });

  describe('cancelAllOrdersAfter', () => {
    test('arms the dead-man switch and answers the deadline; the timer cancels the orders', async () => {
      const { h, alice, aliceId } = await market();
      await place(h, alice, { tradeType: '1', price: '100', amount: '0.1' });
      const body = (await h.call('cancelAllOrdersAfter', alice, { currency: 'btc_usdt' })) as Json;
      assert.deepEqual(body, { code: 1000, message: 'success', deadline: h.venue.time + 60_000 });
      h.venue.time += 60_000;
      await h.venue.must({ type: 'FireTimers' });
      assert.equal(h.venue.engine.openOrders(aliceId).length, 0);
      await refused(h, alice, 'cancelAllOrdersAfter', {}, 3005, /currency is required/);
      await refused(h, alice, 'cancelAllOrdersAfter', { currency: 'nxwc_usdt' }, 3005, /use 'xwc'/);
    });
  });

  describe('order lists', () => {
    /** alice: 12 buys and 3 sells resting, one buy filled, one cancelled. */
    async function history() {
      const m = await market();
      const { h, alice, bob } = m;
      await h.venue.fund('alice', 'btc', '1');
      const buys: string[] = [];
      for (let i = 0; i < 12; i++)
        buys.push(await place(h, alice, { tradeType: '1', price: String(100 + i), amount: '0.1' }));
      const sells: string[] = [];
      for (let i = 0; i < 3; i++)
        sells.push(await place(h, alice, { tradeType: '0', price: String(40000 + i), amount: '0.01' }));
      await place(h, bob, { tradeType: '0', price: '30000', amount: '0.1' });
      const filled = await place(h, alice, { tradeType: '1', price: '30000', amount: '0.1' });
      const cancelled = await place(h, alice, { tradeType: '1', price: '50', amount: '0.2' });
      await h.call('cancelOrder', alice, { currency: 'btc_usdt', id: cancelled });
      return { ...m, buys, sells, filled, cancelled };
    }
    const ids = (body: unknown): string[] => (body as Json[]).map((o) => o.id as string);

    test('getOrders: one side, 10 per page, newest first', async () => {
      const { h, alice, buys, filled, cancelled, sells } = await history();
      const page1 = await h.call('getOrders', alice, {
        currency: 'btc_usdt',
        tradeType: '1',
        pageIndex: '1',
      });
      const page2 = await h.call('getOrders', alice, {
        currency: 'btc_usdt',
        tradeType: '1',
        pageIndex: '2',
      });
      const allBuys = [cancelled, filled, ...[...buys].reverse()];
      assert.deepEqual(ids(page1), allBuys.slice(0, 10));
      assert.deepEqual(ids(page2), allBuys.slice(10));
      assert.deepEqual(
        ids(await h.call('getOrders', alice, { currency: 'btc_usdt', tradeType: '0' })),
        [...sells].reverse(),
      );
      assert.deepEqual(
        await h.call('getOrders', alice, { currency: 'btc_usdt', tradeType: '1', pageIndex: '3' }),
        [],
      );
      await refused(h, alice, 'getOrders', { currency: 'btc_usdt' }, 3005, /tradeType is required/);
      await refused(
        h,
        alice,
        'getOrders',
        { currency: 'btc_usdt', tradeType: '1', pageIndex: '0' },
        3005,
        /pageIndex '0' must be an integer from 1/,
      );
    });

    test('getOrdersNew and getOrdersIgnoreTradeType: pageSize up to 100', async () => {
      const { h, alice, sells, filled, cancelled } = await history();
      const page = await h.call('getOrdersNew', alice, {
        currency: 'btc_usdt',
        tradeType: '0',
        pageSize: '2',
      });
      assert.deepEqual(ids(page), [sells[2], sells[1]]);
      const all = (await h.call('getOrdersIgnoreTradeType', alice, {
        currency: 'btc_usdt',
        pageSize: '100',
      })) as Json[];
      assert.equal(all.length, 17);
      assert.deepEqual(ids(all).slice(0, 2), [cancelled, filled]);
      assert.deepEqual(all.map((o) => o.status).slice(0, 2), [1, 2]);
      const defaults = await h.call('getOrdersIgnoreTradeType', alice, { currency: 'btc_usdt' });
      assert.equal((defaults as Json[]).length, 10);
      for (const method of [
        'getOrdersNew',
        'getOrdersIgnoreTradeType',
        'getUnfinishedOrdersIgnoreTradeType',
        'getFinishedAndPartialOrders',
      ]) {
        const params = { currency: 'btc_usdt', tradeType: '1' };
        await refused(
          h,
          alice,
          method,
          { ...params, pageSize: '101' },
          3005,
          /pageSize '101' must be an integer from 1 to 100/,
        );
        await refused(h, alice, method, { ...params, pageSize: '0' }, 3005, /pageSize/);
        await refused(h, alice, method, { ...params, pageIndex: 'x' }, 3005, /pageIndex/);
        await refused(h, alice, method, { ...params, currency: 'Btc_usdt' }, 3005, /lowercase/);
      }
    });

    test('getUnfinishedOrdersIgnoreTradeType: resting orders from the engine, newest first, paged', async () => {
      const { h, alice, buys, sells } = await history();
      const open = [...[...sells].reverse(), ...[...buys].reverse()];
      assert.deepEqual(
        ids(
          await h.call('getUnfinishedOrdersIgnoreTradeType', alice, {
            currency: 'btc_usdt',
            pageIndex: '1',
            pageSize: '10',
          }),
        ),
        open.slice(0, 10),
      );
      assert.deepEqual(
        ids(
          await h.call('getUnfinishedOrdersIgnoreTradeType', alice, {
            currency: 'btc_usdt',
            pageIndex: '2',
            pageSize: '10',
          }),
        ),
        open.slice(10),
      );
      assert.deepEqual(
        await h.call('getUnfinishedOrdersIgnoreTradeType', alice, {
          currency: 'btc_usdt',
          pageIndex: '3',
          pageSize: '10',
        }),
        [],
      );
      assert.deepEqual(
        await h.call('getUnfinishedOrdersIgnoreTradeType', alice, { currency: 'eth_usdt' }),
        [],
      );
    });

    test('getFinishedAndPartialOrders: orders that traded', async () => {
      const { h, alice, bob, filled, buys } = await history();
      await place(h, bob, { tradeType: '0', price: '111', amount: '0.05' }); // partly fills the 111 buy
      const body = (await h.call('getFinishedAndPartialOrders', alice, {
        currency: 'btc_usdt',
        pageSize: '10',
      })) as Json[];
      assert.deepEqual(ids(body), [filled, buys[11]]);
      assert.deepEqual(
        body.map((o) => o.status),
        [2, 3],
      );
      assert.deepEqual(await h.call('getFinishedAndPartialOrders', alice, { currency: 'eth_usdt' }), []);
    });
  });

  describe('getAccountInfo', () => {
    test('every coin with balances as text, and the calling key’s permissions', async () => {
      const { h, alice, aliceId } = await market();
      await place(h, alice, { tradeType: '1', price: '30000', amount: '0.1' });
      const body = (await h.call('getAccountInfo', alice)) as {
        result: { coins: Json[]; base: Json };
      } & Json;
      assert.equal(body.code, undefined);
      assert.equal(body.result.coins.length, h.venue.engine.coins().length);
      const usdt = body.result.coins.find((c) => c.key === 'usdt');
      assert.deepEqual(usdt, {
        key: 'usdt',
        enName: 'USDT',
        cnName: '泰达币',
        showName: 'USDT',
        unitTag: 'USDT',
        unitDecimal: 6,
        fundstype: 13,
        available: '97000.000000',
        freez: '3000.000000',
        isCanRecharge: true,
        isCanWithdraw: true,
        canLoan: true,
      });
      assert.equal(body.result.coins.find((c) => c.key === 'btc')?.available, '0.00000000');
      assert.deepEqual(body.result.base, {
        username: 'alice',
        trade_password_enabled: false,
        auth_google_enabled: false,
        auth_mobile_enabled: false,
      });
      assert.deepEqual(
        [body.assetPerm, body.leverPerm, body.entrustPerm, body.moneyPerm],
        [true, true, true, true],
      );
      const limited = await h.key(aliceId, { asset: true, entrust: false, money: true, lever: false });
      const b2 = (await h.call('getAccountInfo', limited)) as Json;
      assert.deepEqual(
        [b2.assetPerm, b2.leverPerm, b2.entrustPerm, b2.moneyPerm],
        [true, false, false, true],
      );
    });
  });

  describe('getSpotBills', () => {
    test('bills newest first with signed changes and coin names; filters; page bounds', async () => {
      const { h, alice, bob } = await market();
      await place(h, bob, { tradeType: '0', price: '30000', amount: '0.1' });
      await place(h, alice, { tradeType: '1', price: '30000', amount: '0.1' });
      const body = (await h.call('getSpotBills', alice)) as { result: Json[] } & Json;
      assert.equal(body.code, 1000);
      assert.equal(body.message, 'success');
      const kinds = body.result.map((b) => [b.currencyName, b.typeDesc, b.changeAmount, b.balance]);
      assert.deepEqual(kinds, [
        ['btc', 'buy fee', '-0.00020000 BTC', '0.09980000 BTC'],
        ['btc', 'buy', '+0.10000000 BTC', '0.10000000 BTC'],
        ['usdt', 'buy', '-3000.000000 USDT', '97000.000000 USDT'],
        ['zb', 'deposit', '+1000.00000000 ZB', '1000.00000000 ZB'],
        ['usdt', 'deposit', '+100000.000000 USDT', '100000.000000 USDT'],
      ]);
      const first = body.result[0] as Json;
      assert.equal(first.total, '0.09980000');
      assert.equal(typeof first.id, 'number');
      assert.equal(typeof first.date, 'number');
      assert.match(first.showDate as string, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      assert.match(first.remark as string, /^order \d+$/);

      const usdt = (await h.call('getSpotBills', alice, { currency: 'usdt' })) as { result: Json[] };
      assert.equal(usdt.result.length, 2);
      // dataType 0: the last 48 hours; 1: older. Move the clock 49 hours on.
      h.venue.time += 49 * 3_600_000;
      assert.equal(
        ((await h.call('getSpotBills', alice, { dataType: '0' })) as { result: Json[] }).result.length,
        0,
      );
      assert.equal(
        ((await h.call('getSpotBills', alice, { dataType: '1' })) as { result: Json[] }).result.length,
        5,
      );
      const depositTime = (body.result[4] as Json).showDate as string;
      const range = (await h.call('getSpotBills', alice, {
        startDate: depositTime,
        endDate: depositTime,
      })) as { result: Json[] };
      assert.ok(range.result.length >= 1);
      assert.deepEqual(
        ((await h.call('getSpotBills', alice, { endDate: '2000-01-01 00:00:00' })) as Json).result,
        [],
      );
      const paged = (await h.call('getSpotBills', alice, { pageSize: '10', pageIndex: '2' })) as Json;
      assert.deepEqual(paged, { code: 1000, message: 'success', result: [] });

      const cases: [Record<string, string>, RegExp][] = [
        [{ pageSize: '9' }, /pageSize '9' must be an integer from 10 to 50/],
        [{ pageSize: '51' }, /pageSize/],
        [{ pageIndex: '0' }, /pageIndex/],
        [{ dataType: '2' }, /dataType '2' must be one of 0, 1/],
        [{ startDate: '2024-02-30 00:00:00' }, /startDate '2024-02-30 00:00:00' must be a time/],
        [{ startDate: '2024-01-01T00:00:00' }, /startDate/],
        [{ endDate: '2024-01-01 24:00:00' }, /endDate/],
        [
          { startDate: '2024-01-02 00:00:00', endDate: '2024-01-01 00:00:00' },
          /startDate 2024-01-02 00:00:00 must not be after endDate 2024-01-01 00:00:00/,
        ],
        [{ currency: 'USDT' }, /currency 'USDT' must be lowercase/],
        [{ currency: 'bchabc' }, /use 'bch'/],
        [{ currency: 'doge' }, /unknown coin 'doge'/],
      ];
      for (const [params, message] of cases) await refused(h, alice, 'getSpotBills', params, 3005, message);
    });
  });

  describe('robustness', () => {
    test('random junk to every endpoint: a JSON reply, never an exception, nothing changes', async () => {
      const { h, alice } = await market();
      await place(h, alice, { tradeType: '1', price: '100', amount: '0.1' });
      const before = h.stateText();
      let seed = 12345;
      const rand = (n: number): number => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const junk = [
        '',
        '0',
        '-1',
        '1e400',
        'NaN',
        '[',
        '[[',
        ']]',
        '[[1,2]]',
        '\u0000',
        '%',
        '%zz',
        'é',
        '😀',
        'x'.repeat(3000),
        'btc_usdt',
        '1.0000000000000000001',
        '9007199254740993',
        '__proto__',
        'constructor',
      ];
      const names = [
        'currency',
        'market',
        'id',
        'customerOrderId',
        'tradeType',
        'price',
        'amount',
        'pageIndex',
        'pageSize',
        'tradeParams',
        'acctType',
        'orderType',
        'startDate',
        'endDate',
        'dataType',
        '__proto__',
      ];
      for (const endpoint of SIGNED_ENDPOINTS) {
        // Mutating endpoints would legitimately change state on valid input; junk never is valid here.
        for (let i = 0; i < 40; i++) {
          const params: Record<string, string> = {};
          for (let j = rand(5); j > 0; j--)
            params[names[rand(names.length)] as string] = junk[rand(junk.length)] as string;
          const reply = await h.send(h.request(endpoint.method, alice, params));
          assert.ok('json' in reply && reply.status === undefined);
          const body = reply.json as Json;
          assert.ok(Array.isArray(body) || typeof body === 'object', endpoint.method);
        }
      }
      assert.equal(h.stateText(), before);
      assert.deepEqual(h.logged, []);
    });

    test('a history store that lags: reads wait until it has caught up', async () => {
      const { h, alice, bob } = await market();
      // Feed history late, as a real projection does.
      const venue = h.venue;
      venue.awaitHistory = false;
      const original = venue.history.applyBatch.bind(venue.history);
      venue.history.applyBatch = (entries) =>
        new Promise((resolve, reject) => setTimeout(() => original(entries).then(resolve, reject), 30));
      await place(h, bob, { tradeType: '0', price: '30000', amount: '0.1' });
      const id = await place(h, alice, { tradeType: '1', price: '30000', amount: '0.1' });
      const order = (await h.call('getOrder', alice, { currency: 'btc_usdt', id })) as Json;
      assert.equal(order.status, 2);
    });

    test('an exception below the route is answered 1002 and logged, never thrown', async () => {
      const { h, alice } = await market();
      h.venue.history.listOrders = () => Promise.reject(new Error('disk on fire'));
      const body = (await h.call('getOrdersIgnoreTradeType', alice, { currency: 'btc_usdt' })) as Json;
      assert.deepEqual(body, {
        code: 1002,
        message: 'internal error while serving getOrdersIgnoreTradeType',
      });
      assert.equal(h.logged.length, 1);
    });
  });
});
