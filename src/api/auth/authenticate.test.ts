import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RESULTS } from '../../domain/result-codes.ts';
import { SignedApiHarness, type Credentials } from '../../../test/fixtures/signed-venue.ts';
import { normalizeIp } from './authenticate.ts';
import { secretHash } from './signature.ts';

interface Body {
  code?: number;
  message?: unknown;
}

async function setup(options?: ConstructorParameters<typeof SignedApiHarness>[0]) {
  const h = new SignedApiHarness(options);
  const alice = await h.venue.fund('alice', 'usdt', '1000');
  const creds = await h.key(alice);
  return { h, alice, creds };
}

const codeOf = (body: unknown): number | undefined => (body as Body).code;
const replyJson = (reply: Awaited<ReturnType<SignedApiHarness['send']>>): unknown => {
  if (!('json' in reply)) throw new Error('expected a JSON reply');
  return reply.json;
};
const messageOf = (body: unknown): string => String((body as Body).message);

describe('access key and signature', () => {
  test('a good request (ccxt form) is accepted; the reply has no error code', async () => {
    const { h, creds } = await setup();
    const body = await h.call('getAccountInfo', creds);
    assert.equal(codeOf(body), undefined);
    assert.ok('result' in (body as object));
  });

  test('the raw (percent-encoded) signing form is accepted too', async () => {
    const { h, creds } = await setup();
    const body = await h.call('getSpotBills', creds, { startDate: '2023-11-14 00:00:00' }, { sign: 'raw' });
    assert.equal(codeOf(body), 1000);
    // A space in the value makes the two forms differ: the decoded form is accepted as well.
    assert.equal(codeOf(await h.call('getSpotBills', creds, { startDate: '2023-11-14 00:00:00' })), 1000);
  });

  test('unknown key, missing key, missing sign, tampered request, wrong secret → 1003', async () => {
    const { h, creds } = await setup();
    const cases: [Credentials, Parameters<SignedApiHarness['request']>[3], RegExp][] = [
      [{ ...creds, accessKey: 'nobody-0000-0000' }, {}, /unknown accesskey/],
      [{ ...creds, secret: 'not the secret' }, {}, /signature does not match/],
      [creds, { sign: '0123456789abcdef0123456789abcdef' }, /signature does not match/],
      [creds, { sign: '' }, /sign missing/],
      [creds, { sign: 'not hex at all' }, /signature does not match/],
    ];
    for (const [c, options, message] of cases) {
      const body = await h.call('getAccountInfo', c, {}, options);
      assert.equal(codeOf(body), RESULTS.AUTH_FAILED.code);
      assert.match(messageOf(body), message);
    }
    const request = h.request('getAccountInfo', creds);
    const noKey = { ...request, params: request.params.filter((p) => p.name !== 'accesskey') };
    const reply = await h.send(noKey);
    assert.ok(
      'json' in reply && codeOf(reply.json) === 1003 && /accesskey missing/.test(messageOf(reply.json)),
    );

    const signed = h.request('order', creds, {
      currency: 'btc_usdt',
      tradeType: '1',
      price: '100',
      amount: '1',
    });
    const tampered = {
      ...signed,
      params: signed.params.map((p) =>
        p.name === 'amount' ? { name: 'amount', value: '9', raw: 'amount=9' } : p,
      ),
    };
    const r = await h.send(tampered);
    assert.ok('json' in r && codeOf(r.json) === 1003);
    assert.equal(h.venue.engine.openOrders(1).length, 0);
  });

  test('a parameter given twice is refused (the signed string and the handler could disagree)', async () => {
    const { h, creds } = await setup();
    const body = await h.call(
      'getOrder',
      creds,
      { currency: 'btc_usdt', id: '1' },
      { extra: [{ name: 'id', value: '2', raw: 'id=2' }] },
    );
    assert.equal(codeOf(body), 3005);
    assert.match(messageOf(body), /'id' given more than once/);
  });

  test('a deleted key stops working; a key recreated under the same name uses its new secret', async () => {
    const { h, alice, creds } = await setup();
    assert.equal(codeOf(await h.call('getAccountInfo', creds)), undefined);
    await h.venue.must({ type: 'DeleteApiKey', accessKey: creds.accessKey });
    assert.equal(codeOf(await h.call('getAccountInfo', creds)), 1003);
    const newSecret = 'a-new-secret';
    await h.venue.must({
      type: 'CreateApiKey',
      userId: alice,
      accessKey: creds.accessKey,
      sealedSecret: h.sealer.seal(secretHash(newSecret), creds.accessKey),
      permissions: { asset: true, entrust: true, money: true, lever: true },
      ips: [],
    });
    assert.equal(codeOf(await h.call('getAccountInfo', creds)), 1003);
    assert.equal(codeOf(await h.call('getAccountInfo', { ...creds, secret: newSecret })), undefined);
  });
});

describe('reqTime', () => {
  test('within ±10 s accepted; beyond refused with 3007; missing or non-numeric → 3007', async () => {
    const { h, creds } = await setup();
    const at = (offset: number): string => String(h.venue.time + 20 + offset);
    for (const offset of [0, 10_000, -10_000, 9_999]) {
      assert.equal(
        codeOf(await h.call('getAccountInfo', creds, {}, { reqTime: at(offset) })),
        undefined,
        `${offset}`,
      );
    }
    for (const offset of [10_001, -10_001, -3_600_000]) {
      const body = await h.call('getAccountInfo', creds, {}, { reqTime: at(offset) });
      assert.equal(codeOf(body), RESULTS.REQUEST_EXPIRED.code, `${offset}`);
      assert.match(messageOf(body), /at most 10000 ms either way/);
    }
    const missing = await h.call('getAccountInfo', creds, {}, { reqTime: null });
    assert.equal(codeOf(missing), 3007);
    assert.match(messageOf(missing), /reqTime missing/);
    for (const bad of ['abc', '1.5e12', '-1', '16500000000001234567']) {
      const body = await h.call('getAccountInfo', creds, {}, { reqTime: bad });
      assert.equal(codeOf(body), 3007, bad);
      assert.match(messageOf(body), /milliseconds/);
    }
  });

  test('the window is configurable', async () => {
    const { h, creds } = await setup({ reqTimeWindowMs: 1000 });
    const late = String(h.venue.time + 20 - 1500);
    assert.equal(codeOf(await h.call('getAccountInfo', creds, {}, { reqTime: late })), 3007);
  });
});

describe('IP binding', () => {
  test('a bound key works only from its IPs (IPv4-mapped and IPv6 spellings match)', async () => {
    const { h, alice } = await setup();
    const creds = await h.key(alice, undefined, ['192.0.2.7', '2001:db8::1']);
    assert.equal(codeOf(await h.call('getAccountInfo', creds, {}, { ip: '192.0.2.7' })), undefined);
    assert.equal(codeOf(await h.call('getAccountInfo', creds, {}, { ip: '::ffff:192.0.2.7' })), undefined);
    assert.equal(
      codeOf(await h.call('getAccountInfo', creds, {}, { ip: '2001:DB8:0:0:0:0:0:1' })),
      undefined,
    );
    const body = await h.call('getAccountInfo', creds, {}, { ip: '192.0.2.8' });
    assert.equal(codeOf(body), RESULTS.IP_NOT_BOUND.code);
    assert.match(messageOf(body), /192\.0\.2\.8 is not bound/);
  });

  test('normalizeIp', () => {
    assert.equal(normalizeIp('::FFFF:10.0.0.1'), '10.0.0.1');
    assert.equal(normalizeIp('0:0:0:0:0:0:0:1'), '::1');
    assert.equal(normalizeIp('not an ip'), 'not an ip');
  });
});

describe('method and permissions', () => {
  test('a method parameter must match the path; absent is fine', async () => {
    const { h, creds } = await setup();
    const body = await h.call('getAccountInfo', creds, { method: 'order' });
    assert.equal(codeOf(body), 3005);
    assert.match(messageOf(body), /does not match the path's method 'getAccountInfo'/);
    assert.equal(codeOf(await h.call('getAccountInfo', creds, {}, { withMethod: false })), undefined);
  });

  test('each endpoint needs its permission: asset for account, entrust for orders', async () => {
    const { h, alice } = await setup();
    const none = { asset: false, entrust: false, money: false, lever: false };
    const assetOnly = await h.key(alice, { ...none, asset: true });
    const entrustOnly = await h.key(alice, { ...none, entrust: true });
    const moneyAndLever = await h.key(alice, { ...none, money: true, lever: true });
    const calls: [string, Record<string, string>, 'asset' | 'entrust'][] = [
      ['getAccountInfo', {}, 'asset'],
      ['getSpotBills', {}, 'asset'],
      ['order', { currency: 'btc_usdt', tradeType: '1', price: '100', amount: '0.1' }, 'entrust'],
      ['orderMoreV2', { market: 'btc_usdt', tradeType: '1', tradeParams: '[[100,0.1]]' }, 'entrust'],
      ['cancelOrder', { currency: 'btc_usdt', id: '999' }, 'entrust'],
      ['cancelAllOrdersAfter', { currency: 'btc_usdt' }, 'entrust'],
      ['getOrder', { currency: 'btc_usdt', id: '999' }, 'entrust'],
      ['getOrders', { currency: 'btc_usdt', tradeType: '1' }, 'entrust'],
      ['getOrdersNew', { currency: 'btc_usdt', tradeType: '1' }, 'entrust'],
      ['getOrdersIgnoreTradeType', { currency: 'btc_usdt' }, 'entrust'],
      ['getUnfinishedOrdersIgnoreTradeType', { currency: 'btc_usdt' }, 'entrust'],
      ['getFinishedAndPartialOrders', { currency: 'btc_usdt' }, 'entrust'],
    ];
    for (const [method, params, needs] of calls) {
      const allowed = needs === 'asset' ? assetOnly : entrustOnly;
      const denied = needs === 'asset' ? entrustOnly : assetOnly;
      const ok = await h.call(method, allowed, params);
      assert.notEqual(codeOf(ok), 1012, `${method} with ${needs}Perm`);
      assert.notEqual(codeOf(ok), 1003, `${method} with ${needs}Perm`);
      for (const creds of [denied, moneyAndLever]) {
        const body = await h.call(method, creds, params);
        assert.equal(codeOf(body), RESULTS.PERMISSION_DENIED.code, method);
        assert.match(messageOf(body), new RegExp(`lacks ${needs}Perm, which ${method} needs`));
      }
    }
    assert.equal(h.logged.length, 0);
  });
});

describe('rate limits in the pipeline', () => {
  test('the 61st request of a key within a second → 4002 with when to retry; other keys unaffected', async () => {
    const { h, alice, creds } = await setup();
    const other = await h.key(alice);
    const start = h.venue.time;
    for (let i = 0; i < 60; i++) {
      const req = h.request('getAccountInfo', creds);
      h.venue.time = start; // all in the same millisecond
      const r = await h.send({ ...req, receivedAt: start });
      assert.ok('json' in r && codeOf(r.json) === undefined, `request ${i + 1}`);
    }
    const req = h.request('getAccountInfo', creds);
    h.venue.time = start + 500;
    const r = await h.send({ ...req, receivedAt: start + 500 });
    assert.ok('json' in r);
    assert.equal(codeOf(r.json), RESULTS.RATE_LIMITED.code);
    assert.match(messageOf(r.json), /retry after 500 ms/);
    assert.equal(codeOf(await h.call('getAccountInfo', other)), undefined);
  });

  test('bad signatures count against the IP but not against the key', async () => {
    const { h, creds } = await setup();
    for (let i = 0; i < 100; i++) await h.call('getAccountInfo', { ...creds, secret: 'guess' });
    assert.equal(h.limiter.size.keys, 0);
    assert.equal(codeOf(await h.call('getAccountInfo', creds)), undefined);
    assert.equal(h.limiter.size.keys, 1);
  });
});

describe('replay protection (a key in strict mode)', () => {
  async function strict() {
    const h = new SignedApiHarness();
    const alice = await h.venue.fund('alice', 'usdt', '100000');
    const creds = await h.key(alice, undefined, [], { replayProtection: true });
    const plain = await h.key(alice);
    return { h, alice, creds, plain };
  }

  test('off by default: the same signed request (ZB: reqTime is not signed) is accepted again', async () => {
    const { h, plain } = await strict();
    const request = h.request('getAccountInfo', plain);
    assert.equal(codeOf(replyJson(await h.send(request))), undefined);
    assert.equal(codeOf(replyJson(await h.send(request))), undefined, 'a replay is accepted: the ZB way');
    assert.equal(h.venue.engine.apiKey(plain.accessKey)?.replayProtection, undefined);
  });

  test('a signed nonce is required; each signed request is accepted once; a stale one is refused', async () => {
    const { h, creds } = await strict();
    assert.equal(h.venue.engine.apiKey(creds.accessKey)?.replayProtection, true);
    const missing = await h.call('getAccountInfo', creds);
    assert.equal(codeOf(missing), 3005);
    assert.match(messageOf(missing), /replay protection: sign a parameter nonce/);
    for (const nonce of ['', 'abc', '-1', '1.5']) {
      assert.equal(codeOf(await h.call('getAccountInfo', creds, { nonce })), 3005, nonce);
    }
    const request = h.request('getAccountInfo', creds, { nonce: String(h.venue.time + 20) });
    assert.equal(codeOf(replyJson(await h.send(request))), undefined);
    // The same request again, even with a fresh reqTime (it is not signed) or the sign in capitals.
    const withReqTime = (time: number) => ({
      ...request,
      receivedAt: time,
      params: request.params.map((p) =>
        p.name === 'reqTime' ? { ...p, value: String(time), raw: `reqTime=${time}` } : p,
      ),
    });
    const again = withReqTime(h.venue.time);
    const replayed = replyJson(await h.send(again));
    assert.equal(codeOf(replayed), 3007);
    assert.match(messageOf(replayed), /request already received/);
    const upper = {
      ...request,
      params: request.params.map((p) => (p.name === 'sign' ? { ...p, value: p.value.toUpperCase() } : p)),
    };
    assert.equal(codeOf(replyJson(await h.send(upper))), 3007);
    // After the window the signature is forgotten, but its nonce is stale: still refused.
    h.venue.time += 10_001;
    const late = replyJson(await h.send(withReqTime(h.venue.time)));
    assert.equal(codeOf(late), 3007);
    assert.match(messageOf(late), /nonce \d+ is \d+ ms behind the server time/);
    // A new nonce is a new request.
    assert.equal(
      codeOf(await h.call('getAccountInfo', creds, { nonce: String(h.venue.time + 20) })),
      undefined,
    );
  });

  test('two identical orders need something signed to differ: the nonce, or customerOrderId', async () => {
    const { h, creds, alice } = await strict();
    const order = { currency: 'btc_usdt', tradeType: '1', price: '100', amount: '0.1' };
    const nonce = String(h.venue.time + 20);
    const first = h.request('order', creds, { ...order, nonce });
    const second = h.request('order', creds, { ...order, nonce });
    assert.equal(codeOf(replyJson(await h.send(first))), 1000);
    assert.equal(codeOf(replyJson(await h.send(second))), 3007, 'the same signed text is one request');
    assert.equal(codeOf(await h.call('order', creds, { ...order, nonce, customerOrderId: 'second1' })), 1000);
    assert.equal(h.venue.engine.openOrders(alice).length, 2);
  });
});

describe('ReplayGuard', () => {
  test('remembers a signature until its time, per key; refuses past its bound', async () => {
    const { ReplayGuard } = await import('./replay-guard.ts');
    const guard = new ReplayGuard({ maxPerKey: 3 });
    assert.equal(guard.admit('k1', 'aa', 100, 0), 'fresh');
    assert.equal(guard.admit('k1', 'AA', 100, 50), 'replayed');
    assert.equal(guard.admit('k2', 'aa', 100, 50), 'fresh', 'another key');
    assert.equal(guard.admit('k1', 'aa', 200, 100), 'fresh', 'forgotten at its time');
    assert.equal(guard.admit('k1', 'bb', 200, 100), 'fresh');
    assert.equal(guard.admit('k1', 'cc', 200, 100), 'fresh');
    assert.equal(guard.admit('k1', 'dd', 200, 100), 'full');
    assert.equal(guard.admit('k1', 'dd', 300, 200), 'fresh', 'room again once they expire');
    assert.equal(guard.remembered('k1'), 1);
    guard.admit('k3', 'zz', 1, 0);
    guard.admit('k4', 'zz', 30_000, 20_000);
    assert.equal(guard.remembered('k2'), 0, 'idle keys are swept');
  });
});
