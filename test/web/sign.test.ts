import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signedQuery as serverSideQuery } from '../../src/api/auth/sign-request.ts';
import { hmacMd5Hex as nodeHmacMd5Hex, secretHash as nodeSecretHash } from '../../src/api/auth/signature.ts';
import { hmacMd5Hex, secretHash, signedQuery, signedSubscription } from '../../web/src/sign.ts';

// zb-api-facts §4.3 and docs/websocket.md: the vectors every client must reproduce.
const KEY = 'a1b2c3d4-0000-1111-2222-333344445555';
const SECRET = 'f0e1d2c3-aaaa-bbbb-cccc-ddddeeeeffff';

test("the page's signing (@noble/hashes) gives the documented vectors", () => {
  const hash = secretHash(SECRET);
  assert.equal(hash, '733dba65420d5cc841e56874d788f66280a0cf48');
  assert.equal(
    hmacMd5Hex(hash, `accesskey=${KEY}&method=getAccountInfo`),
    'dc2c812c4367882fa1a0e552fb42a445',
  );
  assert.match(
    signedQuery(
      'order',
      [
        ['amount', '0.0100'],
        ['currency', 'btc_usdt'],
        ['price', '30000.00'],
        ['tradeType', '1'],
      ],
      KEY,
      hash,
      1_650_000_000_000,
    ),
    /&sign=38536f70caa027022b2015f32c9e9293&reqTime=1650000000000$/,
  );
  assert.equal(
    signedSubscription(
      { channel: 'push_user_incr_record', event: 'addChannel', market: 'btcusdtdefault' },
      KEY,
      hash,
    ).sign,
    '059796c8670990b9f6789dc16543a7ed',
  );
  assert.equal(
    signedSubscription({ channel: 'push_user_asset', event: 'addChannel' }, KEY, hash).sign,
    'cd2a9c2a9e856d926934bdbac1893cb5',
  );
});

test("the page's signing equals node:crypto's on awkward text", () => {
  for (const text of ['', 'é€😀', 'a=b&c=d', 'x'.repeat(1000), '\u0000\uffff']) {
    assert.equal(secretHash(text), nodeSecretHash(text));
    assert.equal(hmacMd5Hex(secretHash(text), text), nodeHmacMd5Hex(nodeSecretHash(text), text));
  }
  const params: [string, string][] = [
    ['receiveAddr', 'TXyz123abc_memo 1&2'],
    ['safePwd', 'p@ss w/rd=1'],
  ];
  assert.equal(
    signedQuery('withdraw', params, KEY, secretHash(SECRET), 1),
    serverSideQuery('withdraw', params, KEY, SECRET, 1),
  );
});
