import assert from 'node:assert/strict';
import { createSecretKey } from 'node:crypto';
import { describe, test } from 'node:test';
import type { RequestParam } from '../http/types.ts';
import {
  decodedSignedString,
  hmacMd5Hex,
  rawSignedString,
  secretHash,
  sentOrderSignedString,
  signingKeyOf,
  signWsMessage,
  verifyRequestSignature,
  verifyWsSignature,
  wsSignedText,
  wsSignedTextAllStrings,
} from './signature.ts';

// zb-api-facts §4.3: fake credentials and the vectors computed with ccxt 2.9.16 and Python hmac.
const API_KEY = 'a1b2c3d4-0000-1111-2222-333344445555';
const SECRET = 'f0e1d2c3-aaaa-bbbb-cccc-ddddeeeeffff';
const HASH = '733dba65420d5cc841e56874d788f66280a0cf48';

/**
 * verifyRequestSignature with HASH given as text and as the server's cached KeyObject: the two
 * must agree on every vector.
 */
function verifies(params: readonly RequestParam[], sign: string): boolean {
  const withText = verifyRequestSignature(HASH, params, sign);
  assert.equal(verifyRequestSignature(signingKeyOf(HASH), params, sign), withText);
  return withText;
}

/** Params as a client sends them: decoded values, raw segments percent-encoded (encodeURIComponent). */
function params(pairs: [string, string][], rawOf?: (name: string, value: string) => string): RequestParam[] {
  return pairs.map(([name, value]) => ({
    name,
    value,
    raw: rawOf ? rawOf(name, value) : `${encodeURIComponent(name)}=${encodeURIComponent(value)}`,
  }));
}

const withTail = (pairs: [string, string][], sign: string): [string, string][] => [
  ...pairs,
  ['sign', sign],
  ['reqTime', '1650000000000'],
];

describe('HMAC-MD5', () => {
  test('RFC 2104 test vectors, with the key as bytes (KeyObject) and as text', () => {
    assert.equal(
      hmacMd5Hex(createSecretKey(Buffer.alloc(16, 0x0b)), 'Hi There'),
      '9294727a3638bb1c13f48ef8158bfc9d',
    );
    assert.equal(hmacMd5Hex('Jefe', 'what do ya want for nothing?'), '750c783e6ab0b503eaa86e310a5db738');
    assert.equal(
      hmacMd5Hex(createSecretKey(Buffer.from('Jefe')), 'what do ya want for nothing?'),
      '750c783e6ab0b503eaa86e310a5db738',
    );
  });

  test('a signature is accepted in either case; every other text is refused', () => {
    const p = params([
      ['accesskey', API_KEY],
      ['method', 'getAccountInfo'],
    ]);
    const good = hmacMd5Hex(HASH, decodedSignedString(p));
    assert.ok(verifies(p, good));
    assert.ok(verifies(p, good.toUpperCase()));
    const flipped = `${good.slice(0, 31)}${good[31] === '0' ? '1' : '0'}`;
    for (const bad of [
      flipped,
      good.slice(0, 31),
      `${good}0`,
      '',
      `${good.slice(0, 30)}zz`,
      `${good.slice(0, 30)}g0`,
      ' '.repeat(32),
      `-${good.slice(1)}`,
    ]) {
      assert.equal(verifies(p, bad), false, bad);
    }
  });
});

describe('§4.3 test vectors', () => {
  test('sha1hex(secret)', () => {
    assert.equal(secretHash(SECRET), HASH);
  });

  test('V1 getAccountInfo', () => {
    const p = params(
      withTail(
        [
          ['accesskey', API_KEY],
          ['method', 'getAccountInfo'],
        ],
        'x',
      ),
    );
    assert.equal(decodedSignedString(p), `accesskey=${API_KEY}&method=getAccountInfo`);
    assert.equal(hmacMd5Hex(HASH, decodedSignedString(p)), 'dc2c812c4367882fa1a0e552fb42a445');
    assert.ok(verifies(p, 'dc2c812c4367882fa1a0e552fb42a445'));
    // The same key as a KeyObject (what the server caches) signs identically.
    const serverKey = signingKeyOf(HASH);
    assert.equal(hmacMd5Hex(serverKey, decodedSignedString(p)), 'dc2c812c4367882fa1a0e552fb42a445');
    assert.ok(verifyRequestSignature(serverKey, p, 'dc2c812c4367882fa1a0e552fb42a445'));
    assert.ok(!verifyRequestSignature(serverKey, p, 'dc2c812c4367882fa1a0e552fb42a446'));
  });

  test('V2 order, parameters in any order, sign and reqTime anywhere', () => {
    const pairs: [string, string][] = [
      ['sign', '38536f70caa027022b2015f32c9e9293'],
      ['tradeType', '1'],
      ['price', '30000.00'],
      ['reqTime', '1650000000000'],
      ['method', 'order'],
      ['currency', 'btc_usdt'],
      ['amount', '0.0100'],
      ['accesskey', API_KEY],
    ];
    const p = params(pairs);
    assert.equal(
      decodedSignedString(p),
      `accesskey=${API_KEY}&amount=0.0100&currency=btc_usdt&method=order&price=30000.00&tradeType=1`,
    );
    assert.ok(verifies(p, '38536f70caa027022b2015f32c9e9293'));
  });

  const v3: [string, string][] = [
    ['accesskey', API_KEY],
    ['amount', '1.5'],
    ['currency', 'usdt'],
    ['fees', '1'],
    ['method', 'withdraw'],
    ['receiveAddr', 'TXyz123abc_memo 1&2'],
    ['safePwd', 'p@ss w/rd=1'],
  ];

  test('V3 withdraw: raw values (ccxt/Java) match the decoded string', () => {
    const p = params(v3);
    assert.equal(hmacMd5Hex(HASH, decodedSignedString(p)), '925e3b0e6155e5544c1e4970cb8fd7d9');
    assert.ok(verifies(p, '925e3b0e6155e5544c1e4970cb8fd7d9'));
  });

  test('V3 withdraw: percent-encoded signing (Go/PHP) matches the raw segments', () => {
    const p = params(v3);
    assert.equal(
      rawSignedString(p),
      `accesskey=${API_KEY}&amount=1.5&currency=usdt&fees=1&method=withdraw` +
        '&receiveAddr=TXyz123abc_memo%201%262&safePwd=p%40ss%20w%2Frd%3D1',
    );
    assert.ok(verifies(p, '5dc32576202d882c110ed2af3d0426e5'));
  });

  const v4: [string, string][] = [
    ['accesskey', API_KEY],
    ['market', 'btc_usdt'],
    ['method', 'orderMoreV2'],
    ['tradeParams', '[[30000,0.01],[30100,0.02]]'],
    ['tradeType', '1'],
  ];

  test('V4 orderMoreV2 with raw JSON in tradeParams (and tradeParams < tradeType)', () => {
    const p = params(v4);
    assert.equal(
      decodedSignedString(p),
      `accesskey=${API_KEY}&market=btc_usdt&method=orderMoreV2&tradeParams=[[30000,0.01],[30100,0.02]]&tradeType=1`,
    );
    assert.ok(verifies(p, '70b1d1d3472792be2f5ca1d61d0953dc'));
  });

  test('V4 percent-encoded variant', () => {
    assert.ok(verifies(params(v4), '5a44c11274c470f68f6e0f64e5e9aba0'));
  });

  test('V4 coinrust form: tradeParams raw on the wire, other values encoded', () => {
    const p = params(v4, (n, v) => `${n}=${n === 'tradeParams' ? v : encodeURIComponent(v)}`);
    assert.ok(verifies(p, '70b1d1d3472792be2f5ca1d61d0953dc'));
  });

  test('V5 getUnfinishedOrdersIgnoreTradeType', () => {
    const p = params([
      ['accesskey', API_KEY],
      ['currency', 'btc_usdt'],
      ['method', 'getUnfinishedOrdersIgnoreTradeType'],
      ['pageIndex', '1'],
      ['pageSize', '10'],
    ]);
    assert.ok(verifies(p, 'e8fc9e4bc357d7d716443a9403f3bdbd'));
  });
});

/** The request with sign and reqTime at its end, as every client appends them. */
function withTailParams(list: readonly RequestParam[], sign: string): RequestParam[] {
  return [
    ...list,
    ...params([
      ['sign', sign],
      ['reqTime', '1650000000000'],
    ]),
  ];
}

describe('verification', () => {
  const base: [string, string][] = [
    ['accesskey', API_KEY],
    ['amount', '0.0100'],
    ['currency', 'btc_usdt'],
    ['method', 'order'],
    ['price', '30000.00'],
    ['tradeType', '1'],
  ];
  const good = '38536f70caa027022b2015f32c9e9293';

  test('uppercase hex sign is accepted', () => {
    assert.ok(verifies(params(base), good.toUpperCase()));
  });

  test('tampered value, extra parameter, dropped parameter, wrong secret: refused', () => {
    const tampered = base.map(([k, v]): [string, string] => [k, k === 'price' ? '30000.01' : v]);
    assert.ok(!verifies(params(tampered), good));
    assert.ok(!verifies(params([...base, ['postOnly', 'true']]), good));
    assert.ok(!verifies(params(base.slice(1)), good));
    assert.ok(!verifyRequestSignature(secretHash('other'), params(base), good));
  });

  test('unknown extras are signed; tx is not', () => {
    const extra = params([...base, ['timeInForce', 'IOC']]);
    const sign = hmacMd5Hex(HASH, decodedSignedString(extra));
    assert.ok(verifies(extra, sign));
    assert.ok(verifies(params([...base, ['tx', 'anything']]), good));
  });

  test("the parameters in the order sent also sign (ZB's Python SDK: addSubUser)", () => {
    // zapi.py sends memo, password, method, subUserName in this order and signs that text.
    const sent = params([
      ['accesskey', API_KEY],
      ['memo', 'desk 2'],
      ['password', 'Sub-pass1'],
      ['method', 'addSubUser'],
      ['subUserName', 'desk2'],
    ]);
    const asSent = sentOrderSignedString(sent);
    assert.equal(
      asSent,
      `accesskey=${API_KEY}&memo=desk 2&password=Sub-pass1&method=addSubUser&subUserName=desk2`,
    );
    assert.notEqual(asSent, decodedSignedString(sent));
    assert.ok(verifies(withTailParams(sent, hmacMd5Hex(HASH, asSent)), hmacMd5Hex(HASH, asSent)));
    // Percent-encoded as sent (the raw segments in their order) too.
    const rawAsSent = sent.map((p) => p.raw).join('&');
    assert.ok(verifies(sent, hmacMd5Hex(HASH, rawAsSent)));
    // The sorted form still signs the same request.
    assert.ok(verifies(sent, hmacMd5Hex(HASH, decodedSignedString(sent))));
    // Any other order does not, nor the sent order under another secret or with a changed value.
    const swapped = [sent[0], sent[2], sent[1], sent[3], sent[4]] as RequestParam[];
    assert.ok(!verifies(sent, hmacMd5Hex(HASH, sentOrderSignedString(swapped))));
    assert.ok(!verifies(sent, hmacMd5Hex(secretHash('other'), asSent)));
    const changed = sent.map((p) =>
      p.name === 'memo' ? { ...p, value: 'desk 3', raw: 'memo=desk%203' } : p,
    );
    assert.ok(!verifies(changed, hmacMd5Hex(HASH, asSent)));
  });

  test('malformed signs are refused without throwing', () => {
    for (const s of ['', 'xyz', good.slice(1), `${good}0`, 'g'.repeat(32), '你'.repeat(32)]) {
      assert.equal(verifies(params(base), s), false, s);
    }
  });
});

describe('WebSocket subscription signing (§10.8)', () => {
  const vectors: [Record<string, unknown>, string][] = [
    [
      { event: 'addChannel', channel: 'push_user_incr_record', accesskey: API_KEY, market: 'btcusdtdefault' },
      '059796c8670990b9f6789dc16543a7ed',
    ],
    [
      { channel: 'push_user_asset', event: 'addChannel', accesskey: API_KEY },
      'cd2a9c2a9e856d926934bdbac1893cb5',
    ],
    [
      { no: '1650000000000', accesskey: API_KEY, event: 'addChannel', channel: 'getaccountinfo' },
      '2a147a7d0492a9e1adaf92a9fe26df8b',
    ],
    [
      {
        tradeType: 1,
        price: 30000,
        amount: 0.01,
        event: 'addChannel',
        channel: 'btcusdt_order',
        accesskey: API_KEY,
      },
      '5ddda098273e31175a9e55aa63188944',
    ],
  ];

  test('sorted compact JSON vectors', () => {
    for (const [message, sign] of vectors) {
      assert.equal(signWsMessage(HASH, message), sign);
      assert.equal(signWsMessage(signingKeyOf(HASH), message), sign);
      assert.ok(verifyWsSignature(HASH, { ...message, sign }, sign));
      assert.ok(verifyWsSignature(signingKeyOf(HASH), { ...message, sign }, sign));
    }
    assert.equal(
      wsSignedText(vectors[0]![0]),
      `{"accesskey":"${API_KEY}","channel":"push_user_incr_record","event":"addChannel","market":"btcusdtdefault"}`,
    );
  });

  test('all-strings variant', () => {
    const message = vectors[3]![0];
    assert.equal(
      wsSignedTextAllStrings(message),
      `{"accesskey":"${API_KEY}","amount":"0.01","channel":"btcusdt_order","event":"addChannel","price":"30000","tradeType":"1"}`,
    );
    for (const key of [HASH, signingKeyOf(HASH)]) {
      assert.ok(verifyWsSignature(key, message, 'b1385bfb064814572c2b9effae2a45bc'));
      assert.ok(!verifyWsSignature(key, { ...message, price: 30001 }, 'b1385bfb064814572c2b9effae2a45bc'));
    }
  });
});
